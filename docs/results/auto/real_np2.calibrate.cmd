mpirun -np 2 build/apps/commbench/commbench --calibrate docs/results/auto/real_np2.model --nodes shared

mpirun -np 4 build/apps/commbench/commbench --calibrate docs/results/auto/real_np4.model --nodes ppn=2

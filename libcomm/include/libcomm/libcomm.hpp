// Umbrella header of libcomm.
#pragma once

#include "libcomm/allgather.hpp"
#include "libcomm/alltoall.hpp"
#include "libcomm/alltoallv.hpp"
#include "libcomm/buffer.hpp"
#include "libcomm/check.hpp"
#include "libcomm/comm.hpp"
#include "libcomm/cost_model.hpp"
#include "libcomm/error.hpp"
#include "libcomm/plan.hpp"
#include "libcomm/program.hpp"
#include "libcomm/hierarchical.hpp"
#include "libcomm/node_map.hpp"
#include "libcomm/reduce_scatter.hpp"
#include "libcomm/schedule.hpp"
#include "libcomm/sim.hpp"
#include "libcomm/tuning.hpp"

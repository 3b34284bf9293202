/* Force-included after SimGrid's smpi_helpers.h in LIBCOMM_SIMGRID builds (see the top
 * CMakeLists.txt). smpi_helpers.h defines exit(x) as a function-like macro, which breaks
 * every declaration or call of a member named exit (CLI11's App::exit among them). The
 * project never calls exit() itself: programs return from main through apps::mpi_main,
 * so dropping the macro loses nothing. */
#undef exit

// Included after SimGrid's smpi_helpers.h in the LIBCOMM_SIMGRID build. smpicxx
// force-includes that header, and its function-like macro `exit(x)` breaks CLI11
// (`App::exit(e)` takes one argument after macro expansion fails on two). The programs
// leave through main's return value, which SMPI handles, so the macro is not needed.
#undef exit

// Force-included after SimGrid's smpi_helpers.h in LIBCOMM_SIMGRID builds (smpicxx
// force-includes that header into every file). It defines `exit(x)` as a one-argument
// macro, which breaks any member function named exit, such as CLI11's App::exit(error,
// out, err). The programs only call exit through return codes of main, so the plain
// function is right for them.
#pragma once
#ifdef exit
#undef exit
#endif

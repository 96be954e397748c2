#ifndef CMALLOC_SHIM_H
#define CMALLOC_SHIM_H
// glibc's <malloc.h>, which the Swift Glibc module leaves out: mallopt, to bound the executable's malloc arenas.
#include <malloc.h>
#endif

#ifndef COFFER_CLZMA_SHIM_H
#define COFFER_CLZMA_SHIM_H
#include <lzma.h>
#endif

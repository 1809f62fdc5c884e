// glibc's allocator settings (malloc.h, which Swift's Glibc module leaves out).
#include <malloc.h>

/// Serves every allocation of at least `bytes` with its own mapping, given back when freed, and
/// stops glibc from raising that threshold by itself. Returns 1 on success, as mallopt does.
static inline int coffer_map_allocations_from(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }

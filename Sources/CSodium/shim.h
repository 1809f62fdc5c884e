#ifndef COFFER_CSODIUM_SHIM_H
#define COFFER_CSODIUM_SHIM_H

#include <sodium.h>

#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <sys/resource.h>

/// Keeps secrets out of core files: RLIMIT_CORE 0 everywhere, and on Linux also
/// PR_SET_DUMPABLE 0 (which also stops ptrace attach by same-user processes).
/// `prctl` is variadic, so Swift cannot call it directly; this wrapper can.
/// Returns 0 on success, -1 when either call failed.
static inline int coffer_disable_core_dumps(void) {
    struct rlimit none = { 0, 0 };
    int result = setrlimit(RLIMIT_CORE, &none);
#if defined(__linux__)
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) { result = -1; }
#endif
    return result;
}

/// Whether the process is currently dumpable (1) or not (0); -1 when unknown.
static inline int coffer_is_dumpable(void) {
#if defined(__linux__)
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
#else
    return -1;
#endif
}

#endif

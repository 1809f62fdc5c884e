#ifndef COFFER_CSODIUM_SHIM_H
#define COFFER_CSODIUM_SHIM_H

#include <sodium.h>

#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <sys/resource.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

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

/// On a fatal signal: one fixed line on stderr, then exit 70 (EX_SOFTWARE). Only
/// async-signal-safe calls; it replaces the Swift runtime's backtracer, which would print
/// registers and the memory they point to (keys, passphrases, records) on stderr.
static void coffer_fatal_signal(int signal_number) {
    (void)signal_number;
    static const char message[] = "error: internal error: stopped on a fatal signal (nothing from memory was printed).\n";
    ssize_t ignored = write(2, message, sizeof message - 1);
    (void)ignored;
    _exit(70);
}

/// Installs `coffer_fatal_signal` for SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT and SIGFPE.
/// Returns 0 on success, -1 when any sigaction call failed.
static inline int coffer_replace_crash_reporter(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = coffer_fatal_signal;
    sigemptyset(&action.sa_mask);
    const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE };
    int result = 0;
    for (unsigned i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        if (sigaction(fatal[i], &action, NULL) != 0) { result = -1; }
    }
    return result;
}

#endif

internal import CSodium
import Foundation

/// One-time libsodium set-up and the single place where C return codes become Swift errors.
enum Sodium {
    /// `sodium_init` is idempotent and thread-safe, but calling it once keeps start-up cheap.
    private static let initialised: Bool = sodium_init() >= 0

    static func ensureInitialised() {
        // Without a working libsodium no secret may be handled at all; there is no safe fallback.
        precondition(initialised, "libsodium failed to initialise")
    }

    /// Every libsodium call whose result matters goes through here.
    @inline(__always)
    static func check(_ returnCode: Int32, _ code: CryptoError.Code, _ message: @autoclosure () -> String) throws {
        guard returnCode == 0 else { throw CryptoError(code, message()) }
    }

}

/// The libsodium this process runs with, for `coffer --version`.
public enum SodiumLibrary {
    public static var versionString: String { String(cString: sodium_version_string()) }
}

/// Process-level protections that must run before any secret is read.
public enum ProcessHardening {
    /// Sets `RLIMIT_CORE` to 0 and, on Linux, `PR_SET_DUMPABLE` to 0 so that a crash or a
    /// debugger cannot copy keys, passphrases or decrypted records out of memory.
    /// Returns false when the kernel refused either setting.
    @discardableResult
    public static func disableCoreDumps() -> Bool {
        coffer_disable_core_dumps() == 0
    }

    /// Replaces the Swift runtime's crash backtracer (which prints registers and the memory they
    /// point to) with a handler that prints one fixed line and exits 70. Returns false when the
    /// kernel refused a handler.
    @discardableResult
    public static func replaceCrashReporter() -> Bool {
        coffer_replace_crash_reporter() == 0
    }

    /// Whether the kernel still considers this process dumpable (nil where unknown).
    public static var isDumpable: Bool? {
        switch coffer_is_dumpable() {
        case 0: return false
        case 1, 2: return true
        default: return nil
        }
    }

}

/// Cryptographically secure random bytes from libsodium (getrandom(2) on Linux).
public enum SecureRandom {
    public static func bytes(count: Int) -> [UInt8] {
        Sodium.ensureInitialised()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
        return bytes
    }

    static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        Sodium.ensureInitialised()
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(base, buffer.count)
    }
}

/// Overwrites memory Coffer allocated itself that held secrets (records in plaintext), in a way
/// the optimiser cannot remove.
public func secureWipe(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    sodium_memzero(base, buffer.count)
}

/// Overwrites ordinary (non-sodium) memory that briefly held a secret, such as a line read from
/// a terminal, in a way the optimiser cannot remove.
public func secureWipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { secureWipe($0) }
}

internal import CSodium
import Foundation

/// Secret bytes in `sodium_malloc` memory: guard pages around the buffer, locked out of swap
/// where the kernel allows it, and zeroed by `sodium_free` when the last reference goes away.
///
/// The bytes are reachable only through `withUnsafeBytes`, never printed, and compared in
/// constant time.
public final class SecureBytes: @unchecked Sendable {
    // @unchecked: the buffer is written only during initialisation (or by the owner through
    // withUnsafeMutableBytes before sharing) and is otherwise read-only.
    private let pointer: UnsafeMutableRawPointer
    public let count: Int

    /// Zero-filled secure memory of `count` bytes.
    public init(count: Int) {
        precondition(count >= 0, "negative size")
        Sodium.ensureInitialised()
        guard let pointer = sodium_malloc(Swift.max(count, 1)) else {
            // Out of locked memory is not recoverable for a program that must keep secrets.
            fatalError("sodium_malloc failed: not enough secure memory")
        }
        sodium_memzero(pointer, Swift.max(count, 1))
        self.pointer = pointer
        self.count = count
    }

    /// Copies `bytes` into secure memory. The caller remains responsible for wiping its copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 {
            pointer.copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// Copies `bytes` into secure memory. The caller remains responsible for wiping its copy.
    public convenience init<Bytes: ContiguousBytes>(copying bytes: Bytes) {
        self.init(count: bytes.withUnsafeBytes { $0.count })
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress, source.count > 0 {
                pointer.copyMemory(from: base, byteCount: source.count)
            }
        }
    }

    /// Fresh random secret bytes.
    public static func random(count: Int) -> SecureBytes {
        let bytes = SecureBytes(count: count)
        bytes.withUnsafeMutableBytes { SecureRandom.fill($0) }
        return bytes
    }

    deinit {
        sodium_free(pointer)
    }

    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    public func withUnsafeMutableBytes<Result>(
        _ body: (UnsafeMutableRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// Constant-time equality: the time taken does not depend on where the bytes differ.
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        return other.withUnsafeBytes { sodium_memcmp(pointer, $0.baseAddress!, count) == 0 }
    }
}

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SecureBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

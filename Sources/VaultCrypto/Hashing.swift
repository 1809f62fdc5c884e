internal import CSodium
import Foundation

/// BLAKE2b through libsodium's `crypto_generichash`, unkeyed (a digest) or keyed (a MAC).
public enum BLAKE2b {
    public static let minimumOutputByteCount = Int(crypto_generichash_BYTES_MIN)
    public static let maximumOutputByteCount = Int(crypto_generichash_BYTES_MAX)

    public static func hash(_ input: UnsafeRawBufferPointer, outputByteCount: Int = 32, key: SymmetricKey? = nil)
        -> [UInt8]
    {
        precondition(
            (minimumOutputByteCount...maximumOutputByteCount).contains(outputByteCount), "BLAKE2b output length")
        Sodium.ensureInitialised()
        var output = [UInt8](repeating: 0, count: outputByteCount)
        let compute = { (keyBytes: UnsafeRawBufferPointer?) -> Int32 in
            crypto_generichash(
                &output, outputByteCount,
                input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
                keyBytes?.baseAddress?.assumingMemoryBound(to: UInt8.self), keyBytes?.count ?? 0)
        }
        let result = key.map { $0.withUnsafeBytes { compute($0) } } ?? compute(nil)
        precondition(result == 0, "crypto_generichash failed")
        return output
    }

    /// An unkeyed digest of `output.count` bytes written into `output`: no allocation, for
    /// digests taken of every record of a vault.
    public static func hash(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(
            (minimumOutputByteCount...maximumOutputByteCount).contains(output.count), "BLAKE2b output length")
        Sodium.ensureInitialised()
        let result = crypto_generichash(
            output.baseAddress!.assumingMemoryBound(to: UInt8.self), output.count,
            input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count), nil, 0)
        precondition(result == 0, "crypto_generichash failed")
    }

    public static func hash<Input: ContiguousBytes>(_ input: Input, outputByteCount: Int = 32, key: SymmetricKey? = nil)
        -> [UInt8]
    {
        input.withUnsafeBytes { hash($0, outputByteCount: outputByteCount, key: key) }
    }
}

/// Incremental BLAKE2b for inputs that arrive in pieces (files, record streams, minisign's
/// prehashed signatures). The state lives in secure memory because a keyed state holds the key.
public final class BLAKE2bHasher {
    private let state: SecureBytes
    private let outputByteCount: Int
    private var finished = false

    public init(outputByteCount: Int = 32, key: SymmetricKey? = nil) {
        precondition((BLAKE2b.minimumOutputByteCount...BLAKE2b.maximumOutputByteCount).contains(outputByteCount))
        Sodium.ensureInitialised()
        self.outputByteCount = outputByteCount
        // crypto_generichash_state needs 64-byte alignment; sodium_malloc places a 384-byte
        // block at the end of a page, which satisfies it.
        state = SecureBytes(count: crypto_generichash_statebytes())
        let result: Int32 = state.withUnsafeMutableBytes { s in
            let statePointer = OpaquePointer(s.baseAddress!)
            if let key {
                return key.withUnsafeBytes {
                    crypto_generichash_init(
                        statePointer, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count, outputByteCount)
                }
            }
            return crypto_generichash_init(statePointer, nil, 0, outputByteCount)
        }
        precondition(result == 0, "crypto_generichash_init failed")
    }

    public func update(_ input: UnsafeRawBufferPointer) {
        precondition(!finished, "BLAKE2bHasher used after finalize()")
        let result: Int32 = state.withUnsafeMutableBytes { s in
            crypto_generichash_update(
                OpaquePointer(s.baseAddress!),
                input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count))
        }
        precondition(result == 0, "crypto_generichash_update failed")
    }

    public func update<Input: ContiguousBytes>(_ input: Input) {
        input.withUnsafeBytes { update($0) }
    }

    public func finalize() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: outputByteCount)
        output.withUnsafeMutableBytes { finalize(into: $0) }
        return output
    }

    /// Finishes a 32-byte hash straight into secure memory, for when the digest is a key.
    public func finalizeKey() -> SymmetricKey {
        precondition(outputByteCount == SymmetricKey.byteCount, "a key needs a 32-byte digest")
        let key = SecureBytes(count: outputByteCount)
        key.withUnsafeMutableBytes { finalize(into: $0) }
        return try! SymmetricKey(key)
    }

    private func finalize(into output: UnsafeMutableRawBufferPointer) {
        precondition(!finished, "BLAKE2bHasher finalised twice")
        finished = true
        let result: Int32 = state.withUnsafeMutableBytes { s in
            crypto_generichash_final(
                OpaquePointer(s.baseAddress!), output.baseAddress!.assumingMemoryBound(to: UInt8.self), outputByteCount)
        }
        precondition(result == 0, "crypto_generichash_final failed")
    }
}

/// A SipHash key: 16 secret bytes, held as every key is (locked memory, wiped on release).
public struct SipHashKey: Sendable {
    public static let byteCount = Int(crypto_shorthash_siphash24_KEYBYTES)
    let storage: SecureBytes

    public init(_ bytes: SecureBytes) throws {
        guard bytes.count == Self.byteCount else {
            throw CryptoError(.invalidLength, "A SipHash key must be \(Self.byteCount) bytes, not \(bytes.count).")
        }
        storage = bytes
    }

    public static func random() -> SipHashKey { try! SipHashKey(SecureBytes.random(count: byteCount)) }

    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes(body)
    }
}

/// SipHash-2-4, 64-bit output (libsodium's `crypto_shorthash`): a keyed function several times
/// cheaper than BLAKE2b on inputs as short as a record's payload, for digests taken of every
/// record of a vault at every sync, which only the key's holder compares.
public enum SipHash24 {
    /// The 8 bytes of the output as libsodium writes them, read as a little-endian word.
    public static func hash(_ input: UnsafeRawBufferPointer, key: SipHashKey) -> UInt64 {
        Sodium.ensureInitialised()
        var output: UInt64 = 0
        // An empty input still needs an address to read none of.
        var none: UInt8 = 0
        let result = withUnsafeMutableBytes(of: &output) { output in
            key.withUnsafeBytes { key in
                crypto_shorthash_siphash24(
                    output.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    input.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? withUnsafePointer(to: &none) { $0 },
                    UInt64(input.count), key.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        precondition(result == 0, "crypto_shorthash_siphash24 failed")
        return UInt64(littleEndian: output)
    }
}

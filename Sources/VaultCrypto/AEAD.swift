import Foundation
internal import CSodium

/// XChaCha20-Poly1305 (IETF construction) with associated data.
///
/// The 192-bit nonce is safe to draw at random for every message, so callers never keep a
/// nonce counter that a crash or a copied file could make repeat.
public enum XChaCha20Poly1305 {
    public static let tagByteCount = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    /// Encrypts and authenticates `plaintext`; the result is ciphertext followed by the 16-byte tag.
    public static func seal(_ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: AEADNonce,
                            associatedData: UnsafeRawBufferPointer) -> Data {
        var output = Data(count: plaintext.count + tagByteCount)
        output.withUnsafeMutableBytes { out in
            key.withUnsafeBytes { keyBytes in
                nonce.bytes.withUnsafeBufferPointer { nonceBytes in
                    var written: UInt64 = 0
                    // Cannot fail for valid lengths; the key and nonce lengths are type-checked.
                    let result = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
                        plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                        associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                        nil, nonceBytes.baseAddress!, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    precondition(result == 0, "crypto_aead_xchacha20poly1305_ietf_encrypt failed")
                }
            }
        }
        return output
    }

    public static func seal<Plaintext: ContiguousBytes, AD: ContiguousBytes>(
        _ plaintext: Plaintext, key: SymmetricKey, nonce: AEADNonce, associatedData: AD
    ) -> Data {
        plaintext.withUnsafeBytes { p in
            associatedData.withUnsafeBytes { ad in seal(p, key: key, nonce: nonce, associatedData: ad) }
        }
    }

    /// Verifies and decrypts into `output`, which must hold `ciphertext.count - tagByteCount` bytes.
    /// Nothing is written to `output` unless the tag verifies.
    public static func open(_ ciphertext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: AEADNonce,
                            associatedData: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws {
        guard ciphertext.count >= tagByteCount, output.count == ciphertext.count - tagByteCount else {
            throw CryptoError(.authenticationFailed, "The ciphertext is too short to be authentic.")
        }
        let result: Int32 = key.withUnsafeBytes { keyBytes in
            nonce.bytes.withUnsafeBufferPointer { nonceBytes in
                var written: UInt64 = 0
                return crypto_aead_xchacha20poly1305_ietf_decrypt(
                    output.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil,
                    ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count),
                    associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                    nonceBytes.baseAddress!, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        try Sodium.check(result, .authenticationFailed, "The ciphertext did not authenticate.")
    }

    /// Verifies and decrypts with the 24-byte nonce given as raw bytes, for bulk paths that open
    /// many records without an allocation each. Returns whether the tag verified; nothing is
    /// written to `output` otherwise.
    public static func open(_ ciphertext: UnsafeRawBufferPointer, key: SymmetricKey, nonceBytes: UnsafeRawBufferPointer,
                            associatedData: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard ciphertext.count >= tagByteCount, output.count >= ciphertext.count - tagByteCount, nonceBytes.count == AEADNonce.byteCount else {
            return false
        }
        return key.withUnsafeBytes { keyBytes in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                output.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, nil,
                ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count),
                associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                nonceBytes.baseAddress!.assumingMemoryBound(to: UInt8.self), keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
        }
    }

    /// Verifies and decrypts a non-secret payload.
    public static func open<Ciphertext: ContiguousBytes, AD: ContiguousBytes>(
        _ ciphertext: Ciphertext, key: SymmetricKey, nonce: AEADNonce, associatedData: AD
    ) throws -> Data {
        try open(ciphertext, key: key, nonce: nonce, associatedData: associatedData,
                 allocate: { Data(count: $0) }, fill: { data, body in try data.withUnsafeMutableBytes(body) })
    }

    /// Verifies and decrypts a secret (a wrapped key) straight into secure memory.
    public static func openSecret<Ciphertext: ContiguousBytes, AD: ContiguousBytes>(
        _ ciphertext: Ciphertext, key: SymmetricKey, nonce: AEADNonce, associatedData: AD
    ) throws -> SecureBytes {
        try open(ciphertext, key: key, nonce: nonce, associatedData: associatedData,
                 allocate: { SecureBytes(count: $0) }, fill: { bytes, body in try bytes.withUnsafeMutableBytes(body) })
    }

    /// Shared by both `open` variants: allocate the output, then decrypt into it.
    private static func open<Ciphertext: ContiguousBytes, AD: ContiguousBytes, Output>(
        _ ciphertext: Ciphertext, key: SymmetricKey, nonce: AEADNonce, associatedData: AD,
        allocate: (Int) -> Output,
        fill: (inout Output, (UnsafeMutableRawBufferPointer) throws -> Void) throws -> Void
    ) throws -> Output {
        try ciphertext.withUnsafeBytes { c in
            guard c.count >= tagByteCount else {
                throw CryptoError(.authenticationFailed, "The ciphertext is too short to be authentic.")
            }
            var plaintext = allocate(c.count - tagByteCount)
            try associatedData.withUnsafeBytes { ad in
                try fill(&plaintext) { try open(c, key: key, nonce: nonce, associatedData: ad, into: $0) }
            }
            return plaintext
        }
    }
}

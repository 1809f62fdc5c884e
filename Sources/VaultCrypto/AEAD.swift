internal import CSodium
import Foundation

/// XChaCha20-Poly1305 (IETF construction) with associated data.
///
/// The 192-bit nonce is safe to draw at random for every message, so callers never keep a
/// nonce counter that a crash or a copied file could make repeat.
public enum XChaCha20Poly1305 {
    public static let tagByteCount = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    /// A sealed message as Coffer stores it: nonce ‖ ciphertext ‖ tag.
    ///
    /// The layout is built and taken apart only here, so no caller glues a nonce to a
    /// ciphertext by hand, splits it at the wrong offset, or picks a nonce itself
    /// (`seal(_:key:associatedData:)` draws one for every message).
    public struct SealedBox: Sendable, Equatable {
        /// What a box adds to its plaintext: the 24-byte nonce and the 16-byte tag.
        public static let overheadByteCount = AEADNonce.byteCount + tagByteCount

        /// nonce ‖ ciphertext ‖ tag, the bytes that are stored.
        public let combined: Data

        /// Takes stored bytes as a box. Bytes too short to hold a nonce and a tag are refused
        /// here; anything else is only proved authentic by `open`.
        public init<Bytes: ContiguousBytes>(combined: Bytes) throws {
            let data = combined.withUnsafeBytes { Data($0) }
            guard data.count >= Self.overheadByteCount else {
                throw CryptoError(.authenticationFailed, "The sealed bytes are too short to be authentic.")
            }
            self.combined = data
        }

        fileprivate init(checked combined: Data) { self.combined = combined }

        /// The nonce the box was sealed under.
        public var nonce: AEADNonce { AEADNonce(unchecked: Array(combined.prefix(AEADNonce.byteCount))) }
    }

    /// Seals `plaintext` under a freshly drawn random nonce, returned with it in one box.
    public static func seal<Plaintext: ContiguousBytes, AD: ContiguousBytes>(
        _ plaintext: Plaintext, key: SymmetricKey, associatedData: AD
    ) -> SealedBox {
        plaintext.withUnsafeBytes { p in
            associatedData.withUnsafeBytes { ad in
                var combined = Data(count: SealedBox.overheadByteCount + p.count)
                combined.withUnsafeMutableBytes { out in
                    let nonce = UnsafeMutableRawBufferPointer(rebasing: out[..<AEADNonce.byteCount])
                    SecureRandom.fill(nonce)
                    encrypt(
                        p, key: key, nonce: UnsafeRawBufferPointer(nonce), associatedData: ad,
                        into: UnsafeMutableRawBufferPointer(rebasing: out[AEADNonce.byteCount...]))
                }
                return SealedBox(checked: combined)
            }
        }
    }

    /// Verifies and decrypts a box holding a non-secret payload.
    public static func open<AD: ContiguousBytes>(_ box: SealedBox, key: SymmetricKey, associatedData: AD) throws -> Data
    {
        try open(
            box, key: key, associatedData: associatedData,
            allocate: { Data(count: $0) }, fill: { data, body in try data.withUnsafeMutableBytes(body) })
    }

    /// Verifies and decrypts a box holding a secret (a key) straight into secure memory.
    public static func openSecret<AD: ContiguousBytes>(_ box: SealedBox, key: SymmetricKey, associatedData: AD) throws
        -> SecureBytes
    {
        try open(
            box, key: key, associatedData: associatedData,
            allocate: { SecureBytes(count: $0) }, fill: { bytes, body in try bytes.withUnsafeMutableBytes(body) })
    }

    /// Verifies and decrypts stored nonce ‖ ciphertext ‖ tag bytes into `output`, which must
    /// hold at least `combined.count - SealedBox.overheadByteCount` bytes: for bulk paths that
    /// open many records without an allocation each. Returns whether the tag verified; no
    /// plaintext reaches `output` otherwise.
    public static func open(
        combined: UnsafeRawBufferPointer, key: SymmetricKey, associatedData: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard combined.count >= SealedBox.overheadByteCount,
            output.count >= combined.count - SealedBox.overheadByteCount
        else {
            return false
        }
        return decrypt(
            UnsafeRawBufferPointer(rebasing: combined[AEADNonce.byteCount...]), key: key,
            nonce: UnsafeRawBufferPointer(rebasing: combined[..<AEADNonce.byteCount]),
            associatedData: associatedData, into: output)
    }

    /// Encrypts and authenticates `plaintext` under a nonce the caller chose; the result is
    /// ciphertext followed by the 16-byte tag. For layouts that store the nonce apart from the
    /// ciphertext, and for known-answer tests; everything else uses a `SealedBox`.
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: AEADNonce,
        associatedData: UnsafeRawBufferPointer
    ) -> Data {
        var output = Data(count: plaintext.count + tagByteCount)
        output.withUnsafeMutableBytes { out in
            nonce.bytes.withUnsafeBytes {
                encrypt(plaintext, key: key, nonce: $0, associatedData: associatedData, into: out)
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
    public static func open(
        _ ciphertext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: AEADNonce,
        associatedData: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws {
        guard ciphertext.count >= tagByteCount, output.count == ciphertext.count - tagByteCount else {
            throw CryptoError(.authenticationFailed, "The ciphertext is too short to be authentic.")
        }
        guard
            nonce.bytes.withUnsafeBytes({
                decrypt(ciphertext, key: key, nonce: $0, associatedData: associatedData, into: output)
            })
        else {
            throw CryptoError(.authenticationFailed, "The ciphertext did not authenticate.")
        }
    }

    /// Verifies and decrypts a non-secret payload.
    public static func open<Ciphertext: ContiguousBytes, AD: ContiguousBytes>(
        _ ciphertext: Ciphertext, key: SymmetricKey, nonce: AEADNonce, associatedData: AD
    ) throws -> Data {
        try open(
            ciphertext, key: key, nonce: nonce, associatedData: associatedData,
            allocate: { Data(count: $0) }, fill: { data, body in try data.withUnsafeMutableBytes(body) })
    }

    /// Verifies and decrypts a secret (a wrapped key) straight into secure memory.
    public static func openSecret<Ciphertext: ContiguousBytes, AD: ContiguousBytes>(
        _ ciphertext: Ciphertext, key: SymmetricKey, nonce: AEADNonce, associatedData: AD
    ) throws -> SecureBytes {
        try open(
            ciphertext, key: key, nonce: nonce, associatedData: associatedData,
            allocate: { SecureBytes(count: $0) }, fill: { bytes, body in try bytes.withUnsafeMutableBytes(body) })
    }

    /// Shared by the `open` variants that take the nonce apart: allocate the output, then
    /// decrypt into it.
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

    /// Shared by the `open` variants that take a box: allocate the output, then decrypt into it.
    private static func open<AD: ContiguousBytes, Output>(
        _ box: SealedBox, key: SymmetricKey, associatedData: AD,
        allocate: (Int) -> Output,
        fill: (inout Output, (UnsafeMutableRawBufferPointer) throws -> Void) throws -> Void
    ) throws -> Output {
        var plaintext = allocate(box.combined.count - SealedBox.overheadByteCount)
        try box.combined.withUnsafeBytes { combined in
            try associatedData.withUnsafeBytes { ad in
                try fill(&plaintext) { output in
                    guard open(combined: combined, key: key, associatedData: ad, into: output) else {
                        throw CryptoError(.authenticationFailed, "The ciphertext did not authenticate.")
                    }
                }
            }
        }
        return plaintext
    }

    /// `crypto_aead_xchacha20poly1305_ietf_encrypt` into `output` (plaintext length + tag).
    private static func encrypt(
        _ plaintext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) {
        precondition(nonce.count == AEADNonce.byteCount && output.count == plaintext.count + tagByteCount)
        key.withUnsafeBytes { keyBytes in
            // Cannot fail for valid lengths; the key and nonce lengths are checked.
            let result = crypto_aead_xchacha20poly1305_ietf_encrypt(
                output.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
                plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                nil, nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
                keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            precondition(result == 0, "crypto_aead_xchacha20poly1305_ietf_encrypt failed")
        }
    }

    /// `crypto_aead_xchacha20poly1305_ietf_decrypt` into `output`; whether the tag verified.
    private static func decrypt(
        _ ciphertext: UnsafeRawBufferPointer, key: SymmetricKey, nonce: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard ciphertext.count >= tagByteCount, output.count >= ciphertext.count - tagByteCount,
            nonce.count == AEADNonce.byteCount
        else { return false }
        return key.withUnsafeBytes { keyBytes in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                output.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, nil,
                ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count),
                associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
                keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
        }
    }
}

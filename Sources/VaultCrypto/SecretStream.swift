internal import CSodium
import Foundation

/// `crypto_secretstream_xchacha20poly1305`: a sequence of authenticated chunks in which
/// reordering, dropping, duplicating or truncating chunks is detected, and the last chunk is
/// marked final so a stream cut at a chunk boundary is not mistaken for a complete one.
public enum SecretStream {
    public static let headerByteCount = Int(crypto_secretstream_xchacha20poly1305_HEADERBYTES)
    public static let overheadByteCount = Int(crypto_secretstream_xchacha20poly1305_ABYTES)
    static let finalTag = UInt8(crypto_secretstream_xchacha20poly1305_TAG_FINAL)
    static let messageTag = UInt8(crypto_secretstream_xchacha20poly1305_TAG_MESSAGE)
}

/// Encrypts a stream. The state (which contains a key) lives in secure memory.
public final class SecretStreamEncryptor {
    private let state = SecureBytes(count: crypto_secretstream_xchacha20poly1305_statebytes())
    /// Written before the first chunk; the decryptor needs it.
    public let header: [UInt8]
    private var finished = false

    public init(key: SymmetricKey) {
        var header = [UInt8](repeating: 0, count: SecretStream.headerByteCount)
        let result: Int32 = state.withUnsafeMutableBytes { s in
            key.withUnsafeBytes { k in
                crypto_secretstream_xchacha20poly1305_init_push(
                    s.baseAddress!.assumingMemoryBound(to: crypto_secretstream_xchacha20poly1305_state.self),
                    &header, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        precondition(result == 0, "crypto_secretstream init_push failed")
        self.header = header
    }

    /// Encrypts one chunk. The final chunk must be pushed with `isFinal: true`.
    public func push(
        _ chunk: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        isFinal: Bool
    ) throws -> Data {
        guard !finished else { throw CryptoError(.streamState, "The stream was already finished.") }
        var output = Data(count: chunk.count + SecretStream.overheadByteCount)
        let result: Int32 = output.withUnsafeMutableBytes { out in
            state.withUnsafeMutableBytes { s in
                crypto_secretstream_xchacha20poly1305_push(
                    s.baseAddress!.assumingMemoryBound(to: crypto_secretstream_xchacha20poly1305_state.self),
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
                    chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(chunk.count),
                    associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                    isFinal ? SecretStream.finalTag : SecretStream.messageTag)
            }
        }
        try Sodium.check(result, .operationFailed, "Encrypting a stream chunk failed.")
        finished = isFinal
        return output
    }

    public func push<Chunk: ContiguousBytes>(_ chunk: Chunk, isFinal: Bool) throws -> Data {
        try chunk.withUnsafeBytes { try push($0, isFinal: isFinal) }
    }
}

/// Decrypts a stream produced by `SecretStreamEncryptor`, chunk by chunk.
public final class SecretStreamDecryptor {
    private let state = SecureBytes(count: crypto_secretstream_xchacha20poly1305_statebytes())
    /// True once the chunk tagged final has been read; any further chunk is refused.
    public private(set) var isFinished = false

    public init<Header: ContiguousBytes>(key: SymmetricKey, header: Header) throws {
        let result: Int32 = try header.withUnsafeBytes { h in
            guard h.count == SecretStream.headerByteCount else {
                throw CryptoError(
                    .invalidLength, "A secret-stream header is \(SecretStream.headerByteCount) bytes, not \(h.count).")
            }
            return state.withUnsafeMutableBytes { s in
                key.withUnsafeBytes { k in
                    crypto_secretstream_xchacha20poly1305_init_pull(
                        s.baseAddress!.assumingMemoryBound(to: crypto_secretstream_xchacha20poly1305_state.self),
                        h.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        try Sodium.check(result, .authenticationFailed, "The stream header is invalid.")
    }

    /// Authenticates and decrypts one chunk; throws on any altered, reordered or extra chunk.
    public func pull(
        _ chunk: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    ) throws -> Data {
        guard chunk.count >= SecretStream.overheadByteCount else {
            throw CryptoError(.authenticationFailed, "A stream chunk is too short to be authentic.")
        }
        var output = Data(count: chunk.count - SecretStream.overheadByteCount)
        _ = try output.withUnsafeMutableBytes { try pull(chunk, into: $0, associatedData: associatedData) }
        return output
    }

    /// `pull`, the plaintext written at the start of `output` (at least the chunk's length less
    /// the stream's overhead): how long it is. For a reader that gathers a whole stream in one
    /// buffer, with no buffer a chunk.
    public func pull(
        _ chunk: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
        associatedData: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    ) throws -> Int {
        guard !isFinished else { throw CryptoError(.streamState, "Data follows the final chunk of the stream.") }
        guard chunk.count >= SecretStream.overheadByteCount else {
            throw CryptoError(.authenticationFailed, "A stream chunk is too short to be authentic.")
        }
        let length = chunk.count - SecretStream.overheadByteCount
        guard output.count >= length else {
            throw CryptoError(.invalidLength, "A stream chunk's plaintext needs \(length) bytes, not \(output.count).")
        }
        var tag: UInt8 = 0
        let result: Int32 = state.withUnsafeMutableBytes { s in
            crypto_secretstream_xchacha20poly1305_pull(
                s.baseAddress!.assumingMemoryBound(to: crypto_secretstream_xchacha20poly1305_state.self),
                output.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, &tag,
                chunk.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(chunk.count),
                associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count))
        }
        try Sodium.check(result, .authenticationFailed, "A stream chunk did not authenticate.")
        isFinished = tag == SecretStream.finalTag
        return length
    }

    public func pull<Chunk: ContiguousBytes>(_ chunk: Chunk) throws -> Data {
        try chunk.withUnsafeBytes { try pull($0) }
    }
}

import Foundation
internal import CSodium

/// ISO/IEC 7816-4 padding (`sodium_pad`): hides a payload's exact length inside a bucket of
/// `blockSize` bytes. At least one byte is always added, so a payload of exactly one block grows
/// by a whole block.
public enum Padding {
    public static func pad(_ payload: UnsafeRawBufferPointer, blockSize: Int) -> [UInt8] {
        precondition(blockSize > 0)
        Sodium.ensureInitialised()
        let paddedLength = (payload.count / blockSize + 1) * blockSize
        var buffer = [UInt8](repeating: 0, count: paddedLength)
        if let base = payload.baseAddress, payload.count > 0 {
            buffer.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: base, byteCount: payload.count) }
        }
        var written = 0
        let result = sodium_pad(&written, &buffer, payload.count, blockSize, paddedLength)
        precondition(result == 0 && written == paddedLength, "sodium_pad failed")
        return buffer
    }

    public static func pad<Payload: ContiguousBytes>(_ payload: Payload, blockSize: Int) -> [UInt8] {
        payload.withUnsafeBytes { pad($0, blockSize: blockSize) }
    }

    /// The length of the payload inside `padded`.
    public static func unpaddedLength(of padded: UnsafeRawBufferPointer, blockSize: Int) throws -> Int {
        Sodium.ensureInitialised()
        guard padded.count > 0, padded.count % blockSize == 0 else {
            throw CryptoError(.invalidPadding, "Padded data is not a whole number of blocks.")
        }
        var length = 0
        let result = sodium_unpad(&length, padded.baseAddress!.assumingMemoryBound(to: UInt8.self), padded.count, blockSize)
        try Sodium.check(result, .invalidPadding, "The padding is malformed.")
        return length
    }
}

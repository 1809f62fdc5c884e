import Foundation

/// ISO/IEC 7816-4 padding (`sodium_pad`): hides a payload's exact length inside a bucket of
/// `blockSize` bytes. At least one byte is always added, so a payload of exactly one block grows
/// by a whole block.
public enum Padding {
    /// The bytes `sodium_pad` makes (0x80 after the payload, then zeros), written directly:
    /// `sodium_pad` spends a masked step on every byte of the block to hide the payload's length
    /// from timing, and a page's block is the whole page (tens of KiB). The length is not secret
    /// from this process, and the padding is sealed before anyone else sees it.
    public static func pad(_ payload: UnsafeRawBufferPointer, blockSize: Int) -> [UInt8] {
        precondition(blockSize > 0)
        let paddedLength = (payload.count / blockSize + 1) * blockSize
        var buffer = [UInt8](repeating: 0, count: paddedLength)
        if let base = payload.baseAddress, payload.count > 0 {
            buffer.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: base, byteCount: payload.count) }
        }
        buffer[payload.count] = 0x80
        return buffer
    }

    public static func pad<Payload: ContiguousBytes>(_ payload: Payload, blockSize: Int) -> [UInt8] {
        payload.withUnsafeBytes { pad($0, blockSize: blockSize) }
    }

    /// The length of the payload inside `padded`: before its last 0x80, which must be followed
    /// only by zeros and lie in the final block. Call it only on bytes that have just
    /// authenticated: it is not constant-time as `sodium_unpad` is, which matters only for
    /// unauthenticated data (a padding oracle), and it is several times faster on a vault's
    /// worth of records.
    public static func unpaddedLength(of padded: UnsafeRawBufferPointer, blockSize: Int) throws -> Int {
        guard padded.count > 0, padded.count % blockSize == 0 else {
            throw CryptoError(.invalidPadding, "Padded data is not a whole number of blocks.")
        }
        var end = padded.count
        while end > 0, padded[end - 1] == 0 { end -= 1 }
        guard end > 0, padded[end - 1] == 0x80, padded.count - (end - 1) <= blockSize else {
            throw CryptoError(.invalidPadding, "The padding is malformed.")
        }
        return end - 1
    }
}

internal import CLZMA
import Foundation
import VaultStore

/// xz compression through liblzma.
public enum XZ {
    /// liblzma 5.6.0 and 5.6.1 carried a backdoor (CVE-2024-3094); Coffer refuses to run with them.
    public static func checkLibrary() throws {
        let version = lzma_version_number()  // XYYYZZZS: major, minor, patch, stability
        let (major, minor, patch) = (version / 10_000_000, version / 10_000 % 1000, version / 10 % 1000)
        if major == 5, minor == 6, patch <= 1 {
            throw BackupError(
                .unsafeLibrary,
                "The installed liblzma \(versionString) is a compromised release (CVE-2024-3094). Upgrade xz-utils/liblzma before using Coffer."
            )
        }
    }

    public static var versionString: String { String(cString: lzma_version_string()) }

    /// Compresses with preset 6 and a CRC64 check, on up to `threads` threads for inputs large
    /// enough to split (liblzma's multithreaded encoder works in blocks).
    public static func compress(_ input: [UInt8], threads: Int = ProcessInfo.processInfo.activeProcessorCount) throws
        -> [UInt8]
    {
        let encoder = try Encoder(preset: 6, threads: input.count >= 4 << 20 ? threads : 1, blockSize: 0)
        try input.withUnsafeBytes { try encoder.compress($0) }
        try encoder.finish()
        return encoder.output
    }

    /// Decompresses into memory at most `expectedLength` bytes using at most `memoryLimit` bytes
    /// of memory, and insists on exactly `expectedLength`: a stream that would produce more, or
    /// less, is refused. Only ever called on bytes that have already been authenticated.
    public static func decompress(_ input: [UInt8], expectedLength: Int, memoryLimit: UInt64 = 256 << 20) throws
        -> [UInt8]
    {
        var output: [UInt8] = []
        output.reserveCapacity(min(expectedLength, 64 << 20))
        try input.withUnsafeBytes {
            try decompress($0, expectedLength: UInt64(expectedLength), memoryLimit: memoryLimit) { output += $0 }
        }
        return output
    }

    /// Decompresses authenticated `input`, which must be exactly one xz stream, handing the
    /// output on in pieces as it comes (nothing is held but liblzma's own state): exactly
    /// `expectedLength` bytes, within `memoryLimit`. What archive formats 2 to 4 read with.
    static func decompress(
        _ input: UnsafeRawBufferPointer, expectedLength: UInt64, memoryLimit: UInt64 = 256 << 20,
        reportsProgress: Bool = true, into output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var stream = lzma_stream()
        // Two threads decode the stream's blocks (the encoder writes their sizes in their
        // headers) while this one uses the output; the limit holds for all of them together.
        var options = lzma_mt()
        options.threads = UInt32(min(2, max(1, ProcessInfo.processInfo.activeProcessorCount)))
        options.memlimit_threading = memoryLimit
        options.memlimit_stop = memoryLimit
        options.timeout = 0
        guard lzma_stream_decoder_mt(&stream, &options) == LZMA_OK else {
            throw BackupError(.damaged, "Could not start the xz decoder.")
        }
        defer { lzma_end(&stream) }
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        var produced: UInt64 = 0
        stream.next_in = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.avail_in = input.count
        while true {
            let (status, count) = code(&stream, into: &buffer, LZMA_FINISH)
            produced += UInt64(count)
            guard produced <= expectedLength else {
                throw BackupError(
                    .damaged, "The archive's content is longer than its header declares; stopped decompressing.")
            }
            if reportsProgress {
                WorkProgress.report(.decompressing, input.count - stream.avail_in, of: input.count, every: 1)
            }
            try buffer.withUnsafeBytes { try output(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            switch status {
            case LZMA_OK: continue
            case LZMA_STREAM_END:
                guard stream.avail_in == 0 else {
                    throw BackupError(.damaged, "The archive has data after the end of its compressed content.")
                }
                guard produced == expectedLength else {
                    throw BackupError(
                        .damaged,
                        "The archive's content is \(produced) bytes long, not the \(expectedLength) its header declares."
                    )
                }
                return
            case LZMA_MEMLIMIT_ERROR:
                throw BackupError(.damaged, "The archive asks for more memory to decompress than Coffer allows.")
            case LZMA_MEM_ERROR:
                throw BackupError(.writeFailed, "Out of memory while decompressing.")
            case LZMA_BUF_ERROR:
                throw BackupError(.damaged, "The compressed content is truncated.")
            default:
                throw BackupError(.damaged, "The compressed content is malformed (liblzma error \(status.rawValue)).")
            }
        }
    }

    /// One call of liblzma over the whole of `buffer`: its status and how many bytes it wrote.
    fileprivate static func code(_ stream: inout lzma_stream, into buffer: inout [UInt8], _ action: lzma_action)
        -> (lzma_ret, Int)
    {
        let status = buffer.withUnsafeMutableBufferPointer { out in
            stream.next_out = out.baseAddress
            stream.avail_out = out.count
            return lzma_code(&stream, action)
        }
        return (status, buffer.count - stream.avail_out)
    }

    /// An xz stream written piece by piece (archive formats 2 to 4): the content is compressed as it
    /// is made, so it is never held whole.
    final class Encoder {
        private var stream = lzma_stream()
        private var buffer = [UInt8](repeating: 0, count: 256 << 10)
        private(set) var output: [UInt8] = []

        /// `preset` is liblzma's (0–9); with `threads` > 1, liblzma's multithreaded encoder cuts
        /// the stream into independent blocks of `blockSize` bytes and compresses them in parallel.
        init(preset: UInt32, threads: Int, blockSize: UInt64) throws {
            var options = lzma_mt()
            options.threads = UInt32(max(1, min(threads, 8)))
            options.preset = preset
            options.check = LZMA_CHECK_CRC64
            options.block_size = blockSize
            options.timeout = 0
            let initialised =
                options.threads > 1
                ? lzma_stream_encoder_mt(&stream, &options) : lzma_easy_encoder(&stream, preset, LZMA_CHECK_CRC64)
            guard initialised == LZMA_OK else {
                throw BackupError(
                    .writeFailed, "Could not start the xz encoder (liblzma error \(initialised.rawValue)).")
            }
        }

        deinit { lzma_end(&stream) }

        func compress(_ input: UnsafeRawBufferPointer) throws {
            try run(input, action: LZMA_RUN)
        }

        /// Ends the stream; the compressed bytes are in `output`. liblzma's state (tens of MiB
        /// for two threads) is let go at once, not when the encoder is. (`lzma_end` may run twice.)
        func finish() throws {
            try run(UnsafeRawBufferPointer(start: nil, count: 0), action: LZMA_FINISH)
            lzma_end(&stream)
        }

        private func run(_ input: UnsafeRawBufferPointer, action: lzma_action) throws {
            stream.next_in = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
            stream.avail_in = input.count
            while true {
                let (status, count) = XZ.code(&stream, into: &buffer, action)
                output.append(contentsOf: buffer[..<count])
                switch status {
                case LZMA_OK:
                    if action == LZMA_RUN, stream.avail_in == 0 { return }
                case LZMA_STREAM_END: return
                case LZMA_MEM_ERROR: throw BackupError(.writeFailed, "Out of memory while compressing.")
                default:
                    throw BackupError(.writeFailed, "The xz encoder failed (liblzma error \(status.rawValue)).")
                }
            }
        }
    }
}

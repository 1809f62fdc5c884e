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
        var stream = lzma_stream()
        var options = lzma_mt()
        options.threads = UInt32(max(1, min(threads, 8)))
        options.preset = 6
        options.check = LZMA_CHECK_CRC64
        options.block_size = 0
        // Return to the caller at least every 100 ms, so progress can be shown while the
        // threads work (the multithreaded encoder would otherwise block until a block is done).
        options.timeout = 100
        let initialised =
            input.count >= 4 << 20 && options.threads > 1
            ? lzma_stream_encoder_mt(&stream, &options)
            : lzma_easy_encoder(&stream, 6, LZMA_CHECK_CRC64)
        guard initialised == LZMA_OK else {
            throw BackupError(.writeFailed, "Could not start the xz encoder (liblzma error \(initialised.rawValue)).")
        }
        defer { lzma_end(&stream) }
        return try run(&stream, input: input, outputLimit: Int.max, finish: true, stage: .compressing)
    }

    /// Decompresses at most `expectedLength` bytes using at most `memoryLimit` bytes of memory,
    /// and insists on exactly `expectedLength`: a stream that would produce more, or less, is
    /// refused. Only ever called on bytes that have already been authenticated.
    public static func decompress(_ input: [UInt8], expectedLength: Int, memoryLimit: UInt64 = 256 << 20) throws
        -> [UInt8]
    {
        var stream = lzma_stream()
        guard lzma_stream_decoder(&stream, memoryLimit, 0) == LZMA_OK else {
            throw BackupError(.damaged, "Could not start the xz decoder.")
        }
        defer { lzma_end(&stream) }
        let output = try run(
            &stream, input: input, outputLimit: expectedLength, finish: true, reserving: min(expectedLength, 64 << 20),
            stage: .decompressing)
        guard output.count == expectedLength else {
            throw BackupError(
                .damaged,
                "The archive's content is \(output.count) bytes long, not the \(expectedLength) its header declares.")
        }
        return output
    }

    /// `reserving`: the output's expected size (up to 64 MiB), reserved at once instead of grown
    /// by copying; a larger output grows from there.
    private static func run(
        _ stream: inout lzma_stream, input: [UInt8], outputLimit: Int, finish: Bool, reserving: Int = 0,
        stage: WorkProgress.Stage
    ) throws -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(reserving)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        return try input.withUnsafeBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = inputBuffer.count
            while true {
                let status: lzma_ret = buffer.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = out.count
                    return lzma_code(&stream, finish ? LZMA_FINISH : LZMA_RUN)
                }
                let produced = buffer.count - stream.avail_out
                var consumed = UInt64(input.count - stream.avail_in), written: UInt64 = 0
                if stage == .compressing { lzma_get_progress(&stream, &consumed, &written) }
                WorkProgress.report(stage, Int(consumed), of: input.count, every: 1)
                guard output.count + produced <= outputLimit else {
                    throw BackupError(
                        .damaged, "The archive's content is longer than its header declares; stopped decompressing.")
                }
                output.append(contentsOf: buffer[..<produced])
                switch status {
                case LZMA_OK: continue
                case LZMA_STREAM_END: return output
                case LZMA_MEMLIMIT_ERROR:
                    throw BackupError(.damaged, "The archive asks for more memory to decompress than Coffer allows.")
                case LZMA_MEM_ERROR:
                    throw BackupError(.writeFailed, "Out of memory while (de)compressing.")
                case LZMA_BUF_ERROR:
                    throw BackupError(.damaged, "The compressed content is truncated.")
                default:
                    throw BackupError(
                        .damaged, "The compressed content is malformed (liblzma error \(status.rawValue)).")
                }
            }
        }
    }
}

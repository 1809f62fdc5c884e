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

    /// Compresses with `preset` (6 unless told) and a CRC64 check, on up to `threads` threads for
    /// inputs large enough to split (liblzma's multithreaded encoder works in blocks).
    public static func compress(
        _ input: [UInt8], preset: UInt32 = 6, threads: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws -> [UInt8] {
        let encoder = try Encoder(preset: preset, threads: input.count >= 4 << 20 ? threads : 1, blockSize: 0)
        try input.withUnsafeBytes { try encoder.compress($0) }
        try encoder.finish()
        return encoder.output
    }

    /// The most memory liblzma may use to read an archive, all its decoders together.
    public static let memoryLimit: UInt64 = 256 << 20

    /// Decompresses into memory at most `expectedLength` bytes using at most `memoryLimit` bytes
    /// of memory, and insists on exactly `expectedLength`: a stream that would produce more, or
    /// less, is refused. Only ever called on bytes that have already been authenticated.
    public static func decompress(_ input: [UInt8], expectedLength: Int, memoryLimit: UInt64 = memoryLimit) throws
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
    /// `raisedLimit`, when given, is asked for a larger limit when a block needs more memory
    /// than the current one (nil: refuse): two decoders that run at once share the one limit,
    /// and one of them may take it all once the other is done.
    static func decompress(
        _ input: UnsafeRawBufferPointer, expectedLength: UInt64, memoryLimit: UInt64 = memoryLimit,
        raisedLimit: (() -> UInt64?)? = nil,
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
                if let raised = raisedLimit?(), raised > lzma_memlimit_get(&stream),
                    lzma_memlimit_set(&stream, raised) == LZMA_OK
                {
                    continue
                }
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

extension XZ {
    /// An xz stream assembled from blocks this writer encodes itself (archive format 4's
    /// export): bytes that compress go into LZMA2 blocks of `blockSize`,
    /// compressed on `threads` threads while the caller makes the next ones; bytes the caller
    /// knows xz cannot shrink go into blocks of LZMA2's uncompressed chunks, which cost a copy
    /// to write and to read. (liblzma spends as long on a near-random byte as on any other: at a
    /// million records the amounts column was half the compression time for a sixth of its
    /// size.) The result is one ordinary xz stream, each block's sizes in its header so that
    /// readers can decode blocks in parallel, and no check of its own: the archive's
    /// secretstream authenticates every byte of it before liblzma sees any, and the manifest's
    /// digest every record it holds, where a CRC64 cost 20 ms of each read at a million records.
    final class BlockWriter {
        private let filterPreset: UInt32
        private let storedDictionarySize: UInt32?
        private let blockSize: Int
        private let threads: Int
        private let index: OpaquePointer
        /// Bytes handed in but not yet in a block, and whether they are to be stored as they are.
        private var pending: [UInt8] = []
        private var pendingStored = false
        /// Blocks handed to a thread or done, in stream order, not yet appended to `output`.
        private var inFlight: [Job] = []
        /// Detached blocks not yet encoded: at most two a thread.
        private let detachedSlots: DispatchSemaphore
        private(set) var output: [UInt8] = []
        private var finished = false
        /// What stopped the writer: a block is then missing, so nothing more may be written.
        private var failure: Error?

        /// `storedDictionarySize`: what stored blocks' headers declare as LZMA2's dictionary
        /// (`encodeBlock`), for tests of a reader's memory limit.
        init(preset: UInt32, threads: Int, blockSize: Int, storedDictionarySize: UInt32? = nil) throws {
            self.storedDictionarySize = storedDictionarySize
            filterPreset = preset
            self.blockSize = max(blockSize, 4096)
            self.threads = max(1, min(threads, 8))
            detachedSlots = DispatchSemaphore(value: 2 * self.threads)
            guard let index = lzma_index_init(nil) else {
                throw BackupError(.writeFailed, "Out of memory while compressing.")
            }
            self.index = index
            var flags = Self.streamFlags(indexSize: 0)
            var header = [UInt8](repeating: 0, count: Int(LZMA_STREAM_HEADER_SIZE))
            try XZ.checkEncoding(lzma_stream_header_encode(&flags, &header))
            output = header
            pending.reserveCapacity(self.blockSize)
        }

        deinit {
            for job in inFlight { job.done.wait() }
            lzma_index_end(index, nil)
        }

        /// Bytes for LZMA2 to compress.
        func compress(_ bytes: UnsafeRawBufferPointer) throws { try guarded { try append(bytes, stored: false) } }

        /// Bytes kept as they are (in uncompressed chunks).
        func store(_ bytes: UnsafeRawBufferPointer) throws { try guarded { try append(bytes, stored: true) } }

        /// Runs `body` unless an earlier call failed, and remembers its failure.
        private func guarded(_ body: () throws -> Void) throws {
            if let failure { throw failure }
            do { try body() } catch {
                failure = error
                throw error
            }
        }

        private func append(_ bytes: UnsafeRawBufferPointer, stored: Bool) throws {
            precondition(!finished, "BlockWriter used after finish()")
            guard !bytes.isEmpty else { return }
            if stored != pendingStored {
                try cut()
                pendingStored = stored
            }
            var rest = bytes
            while !rest.isEmpty {
                let taken = min(rest.count, blockSize - pending.count)
                pending.append(contentsOf: rest[..<taken])
                rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
                if pending.count == blockSize { try cut() }
            }
        }

        /// Starts a block of `bytes` now, to be placed in the stream later by `append(_:)`: a
        /// column of a large export block is made a megabyte at a time, long before the block's
        /// header (which holds its columns' lengths) can be written ahead of it. Compressed on
        /// another thread, or copied at once when `stored`.
        func detach(_ bytes: [UInt8], stored: Bool) -> Job {
            let job = Job(input: bytes, stored: stored, dictionarySize: stored ? storedDictionarySize : nil)
            if stored || threads == 1 {
                job.run(preset: filterPreset)
            } else {
                // No more of them at work or waiting for a thread than the writer's own blocks.
                detachedSlots.wait()
                let (preset, slots) = (filterPreset, detachedSlots)
                DispatchQueue.global().async {
                    job.run(preset: preset)
                    slots.signal()
                }
            }
            return job
        }

        /// Places a block `detach` started: after everything written so far.
        func append(_ job: Job) throws {
            try guarded {
                precondition(!finished, "BlockWriter used after finish()")
                try cut()
                while inFlight.count >= 2 * threads { try collect(waiting: true) }
                inFlight.append(job)
                while let first = inFlight.first, first.isDone { try collect(waiting: false) }
            }
        }

        /// Ends the stream: the last blocks, the index and the footer are in `output`.
        func finish() throws {
            guard !finished else { return }
            try guarded { try end() }
            finished = true
        }

        private func end() throws {
            try cut()
            while !inFlight.isEmpty { try collect(waiting: true) }
            var indexBytes = [UInt8](repeating: 0, count: Int(lzma_index_size(index)))
            var written = 0
            try XZ.checkEncoding(lzma_index_buffer_encode(index, &indexBytes, &written, indexBytes.count))
            var flags = Self.streamFlags(indexSize: lzma_index_size(index))
            var footer = [UInt8](repeating: 0, count: Int(LZMA_STREAM_HEADER_SIZE))
            try XZ.checkEncoding(lzma_stream_footer_encode(&flags, &footer))
            output += indexBytes[..<written]
            output += footer
        }

        /// The stream header's and footer's flags: no check, and (the footer) the index's size.
        private static func streamFlags(indexSize: lzma_vli) -> lzma_stream_flags {
            var flags = lzma_stream_flags()
            flags.version = 0
            flags.check = LZMA_CHECK_NONE
            flags.backward_size = indexSize
            return flags
        }

        /// Makes the pending bytes a block: stored ones at once (a copy), others on a thread,
        /// with at most two blocks a thread waiting or at work.
        private func cut() throws {
            guard !pending.isEmpty else { return }
            let job = Job(
                input: pending, stored: pendingStored, dictionarySize: pendingStored ? storedDictionarySize : nil)
            pending.removeAll(keepingCapacity: true)
            while inFlight.count >= 2 * threads { try collect(waiting: true) }
            inFlight.append(job)
            if job.stored || threads == 1 {
                job.run(preset: filterPreset)
            } else {
                let preset = filterPreset
                DispatchQueue.global().async { job.run(preset: preset) }
            }
            while let first = inFlight.first, first.isDone { try collect(waiting: false) }
        }

        /// Appends the oldest block's bytes and lists it in the index.
        private func collect(waiting: Bool) throws {
            let job = inFlight.removeFirst()
            if waiting { job.done.wait() }
            let block = try job.result!.get()
            try XZ.checkEncoding(lzma_index_append(index, nil, block.unpaddedSize, UInt64(job.inputCount)))
            output += block.bytes
        }

        /// One block, encoded on whichever thread runs it; its input let go once encoded.
        final class Job: @unchecked Sendable {
            private var input: [UInt8]
            let inputCount: Int
            let stored: Bool
            let dictionarySize: UInt32?
            let done = DispatchSemaphore(value: 0)
            private let lock = NSLock()
            private var completed = false
            private(set) var result: Result<(bytes: [UInt8], unpaddedSize: UInt64), BackupError>?

            init(input: [UInt8], stored: Bool, dictionarySize: UInt32?) {
                self.input = input
                inputCount = input.count
                self.stored = stored
                self.dictionarySize = dictionarySize
            }

            var isDone: Bool { lock.withLock { completed } }

            func run(preset: UInt32) {
                let encoded = Result {
                    try XZ.encodeBlock(input, stored: stored, preset: preset, dictionarySize: dictionarySize)
                }
                .mapError { $0 as? BackupError ?? BackupError(.writeFailed, "Compressing failed.") }
                input = []
                lock.withLock {
                    result = encoded
                    completed = true
                }
                done.signal()
            }
        }
    }

    /// One xz block (header, LZMA2 data, padding; no check) holding `input`: compressed with
    /// `preset`'s LZMA2 settings, or in uncompressed chunks when `stored`.
    /// `dictionarySize` replaces the preset's in the block's header (only for stored blocks: it
    /// is what a decoder must set aside, which tests of the readers' memory limit need).
    static func encodeBlock(_ input: [UInt8], stored: Bool, preset: UInt32, dictionarySize: UInt32? = nil) throws
        -> (bytes: [UInt8], unpaddedSize: UInt64)
    {
        precondition(dictionarySize == nil || stored)
        var options = lzma_options_lzma()
        guard lzma_lzma_preset(&options, preset) == 0 else {
            throw BackupError(.writeFailed, "liblzma does not know compression preset \(preset).")
        }
        if let dictionarySize { options.dict_size = dictionarySize }
        var out = [UInt8](repeating: 0, count: lzma_block_buffer_bound(input.count))
        var written = 0
        let unpadded = try withUnsafeMutablePointer(to: &options) { options in
            var filters = [
                lzma_filter(id: lzmaFilterLZMA2, options: UnsafeMutableRawPointer(options)),
                lzma_filter(id: lzmaVLIUnknown, options: nil),
            ]
            return try filters.withUnsafeMutableBufferPointer { filters in
                var block = lzma_block()
                block.version = 0
                block.check = LZMA_CHECK_NONE
                block.filters = filters.baseAddress
                let capacity = out.count
                try input.withUnsafeBufferPointer { input in
                    try out.withUnsafeMutableBufferPointer { out in
                        try checkEncoding(
                            stored
                                ? lzma_block_uncomp_encode(
                                    &block, input.baseAddress, input.count, out.baseAddress, &written, capacity)
                                : lzma_block_buffer_encode(
                                    &block, nil, input.baseAddress, input.count, out.baseAddress, &written, capacity))
                    }
                }
                return lzma_block_unpadded_size(&block)
            }
        }
        guard unpadded != 0 else { throw BackupError(.writeFailed, "The xz encoder made an invalid block.") }
        out.removeSubrange(written...)
        return (out, unpadded)
    }

    /// liblzma's filter id for LZMA2, and the id that ends a filter chain (C macros Swift does
    /// not import).
    private static let lzmaFilterLZMA2: lzma_vli = 0x21
    private static let lzmaVLIUnknown: lzma_vli = .max

    /// Every liblzma call on the writing side goes through here.
    fileprivate static func checkEncoding(_ status: lzma_ret) throws {
        switch status {
        case LZMA_OK: return
        case LZMA_MEM_ERROR: throw BackupError(.writeFailed, "Out of memory while compressing.")
        default: throw BackupError(.writeFailed, "The xz encoder failed (liblzma error \(status.rawValue)).")
        }
    }
}

import Foundation
import VaultCrypto
import VaultStore

#if canImport(Glibc)
    import Glibc
#endif

/// What checking an archive's signature and structure proved, without any passphrase.
public struct ArchiveInfo: Sendable, Equatable {
    public let url: URL
    public let vaultID: String
    public let sequence: UInt64
    public let created: Date
    public let size: Int
    public let chunkCount: Int
    /// BLAKE2b-512 of the whole file, which the signature covers: an archive's identity, so
    /// copies a sync tool makes under other names are recognised as the same archive.
    public let digest: [UInt8]
    /// The file name the archive was signed under (the trusted comment's `file=`).
    public let signedName: String?
    /// The copy of the vault that made it, and the commit it was made from (archives made
    /// before Coffer recorded them have neither).
    public let device: String?
    public let commitCounter: UInt64?
    /// Which trusted key signed it (nil when checked against a bare key file).
    public let generation: UInt32?

    /// False for a copy a sync tool or a person made under another name.
    public var hasSignedName: Bool { signedName == url.lastPathComponent }
}

/// A fully verified archive's contents.
public struct ArchiveContents: Sendable {
    public let vaultID: String
    public let sequence: UInt64
    public let created: Date
    public let vaultHeader: [UInt8]
    public let recordCount: Int
    public let countsByKind: [UInt8: UInt64]
    public let netWorth: String
    public let appVersion: String
    public let commitCounter: UInt64
}

/// Coffer's backup archives (Specs/backup-format.md): a canonical export of every record,
/// xz-compressed, encrypted in authenticated secretstream chunks bound to the header, and
/// signed in minisign's format by the vault's own Ed25519 key.
public enum Archive {
    static let chunkSize = 64 << 10
    static let fileExtension = "cbak"
    /// Archives above this declared content size are refused before anything is allocated.
    static let maximumPlaintextLength: UInt64 = 4 << 30
    /// Coffer's content never compresses by more than ~6× (every record carries a random 16-byte
    /// id), so a declared length beyond 64× the compressed size is a decompression bomb, refused
    /// before liblzma runs.
    static let maximumCompressionRatio: UInt64 = 64

    /// `coffer-YYYYMMDD-HHMMSS-<sequence>.cbak` in UTC: unique per vault and sortable.
    public static func fileName(sequence: UInt64, created: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return "coffer-\(formatter.string(from: created))-\(String(format: "%06llu", sequence)).\(fileExtension)"
    }

    static func signatureURL(for url: URL) -> URL { URL(fileURLWithPath: url.path + ".minisig") }

    /// The trusted comment: what the signature vouches for besides the bytes.
    static func trustedComment(
        vaultID: [UInt8], sequence: UInt64, created: UInt64, fileName: String, device: DeviceID?, commitCounter: UInt64
    ) -> String {
        "coffer-archive v1 vault=\(vaultID.hexString) seq=\(sequence) time=\(created) file=\(fileName)"
            + (device.map { " device=\($0.hex) commit=\(commitCounter)" } ?? "")
    }

    /// An archive made and signed but not yet written anywhere: every destination of one backup
    /// gets the same bytes, so the records are read and compressed once.
    public struct Made: Sendable {
        public let name: String
        public let recordCount: Int
        let bytes: [UInt8]
        let signature: String
    }

    /// Makes the archive bytes and their signature (no I/O): format 4, the records in columns
    /// after the coded id table (`ColumnExport`). The records are let go (when the caller gives them
    /// up) as soon as the columns are made, before the archive is sealed: holding both is what
    /// would decide a large backup's memory.
    public static func make(
        _ records: consuming CollectedRecords, layouts: [UInt16: ColumnLayout] = [:], netWorth: String,
        appVersion: String, commitCounter: UInt64, device: DeviceID? = nil, keys: BackupKeys, sequence: UInt64,
        created: Date
    ) throws -> Made {
        let name = fileName(sequence: sequence, created: created)
        let written = try ColumnExport.write(
            records, layouts: layouts,
            manifest: { count, counts, digest in
                ExportFormat.encodeManifest(
                    .init(
                        recordCount: count, countsByKind: counts, contentDigest: digest, commitCounter: commitCounter,
                        netWorth: netWorth, appVersion: appVersion))
            },
            writer: try XZ.BlockWriter(
                preset: compressionPreset, threads: compressionThreads, blockSize: compressionBlock)
        )
        _ = consume records
        let (archive, signature) = try seal(
            prefix: written.prefix, compressed: written.compressed, plaintextLength: written.exportLength, keys: keys,
            sequence: sequence, created: created, fileName: name, device: device, commitCounter: commitCounter)
        return Made(name: name, recordCount: written.recordCount, bytes: archive, signature: signature)
    }

    /// xz settings for the columns (Specs/backup-format.md). Measured at 1M records (BENCHMARKS.md):
    /// columns leave the slower match finders little to find; with ordered ids, what is left to
    /// compress is mostly texts and amounts, and preset 0 takes about an eighth less CPU than
    /// preset 1 for an archive 2 % larger. Blocks of 1 MiB (four times preset 0's dictionary)
    /// keep both threads busy to the end of a 16 MB export with little lost at each block's reset.
    static let compressionPreset: UInt32 = 0
    static let compressionThreads = min(2, ProcessInfo.processInfo.activeProcessorCount)
    static let compressionBlock = 1 << 20

    /// Encrypts and signs compressed content (also how tests build hostile archives).
    /// The body is `prefix` then `compressed` (format 4's id table, then its xz stream), sealed
    /// without joining them.
    static func seal(
        prefix: [UInt8] = [], compressed: [UInt8], plaintextLength: UInt64, keys: BackupKeys, sequence: UInt64,
        created: Date,
        fileName: String, device: DeviceID? = nil, commitCounter: UInt64 = 0,
        formatVersion: UInt16 = ArchiveHeader.currentFormatVersion
    ) throws -> (archive: [UInt8], signature: String) {
        let fileKey = SymmetricKey.random()
        let encryptor = SecretStreamEncryptor(key: fileKey)
        var header = ArchiveHeader(
            formatVersion: formatVersion, vaultID: keys.vaultID.bytes, sequence: sequence,
            created: UInt64(created.timeIntervalSince1970),
            plaintextLength: plaintextLength, vaultHeader: keys.headerBytes, fileKeyNonce: .random(),
            wrappedFileKey: [], streamHeader: encryptor.header, signer: keys.signingKey.publicKey)
        let wrapped = fileKey.withUnsafeBytes { plain in
            ArchiveHeader.fileKeyAssociatedData(header.boundPrefix).withUnsafeBytes {
                XChaCha20Poly1305.seal(plain, key: keys.backupKey, nonce: header.fileKeyNonce, associatedData: $0)
            }
        }
        header.wrappedFileKey = Array(wrapped)
        let headerBytes = header.encoded()
        let chunkAD = BLAKE2b.hash(headerBytes)
        let total = prefix.count + compressed.count
        var output = headerBytes
        output.reserveCapacity(headerBytes.count + total + total / chunkSize * 21 + 64)
        /// The body's bytes in `range`, from whichever part holds them.
        func piece(_ range: Range<Int>) -> ArraySlice<UInt8> {
            if range.upperBound <= prefix.count { return prefix[range] }
            if range.lowerBound >= prefix.count {
                return compressed[(range.lowerBound - prefix.count)..<(range.upperBound - prefix.count)]
            }
            return ArraySlice(prefix[range.lowerBound...] + compressed[..<(range.upperBound - prefix.count)])
        }
        var offset = 0
        repeat {
            let end = min(offset + chunkSize, total)
            let sealed = try piece(offset..<end).withUnsafeBytes { chunk in
                try chunkAD.withUnsafeBytes { try encryptor.push(chunk, associatedData: $0, isFinal: end == total) }
            }
            withUnsafeBytes(of: UInt32(sealed.count).littleEndian) { output += $0 }
            output += sealed
            offset = end
        } while offset < total
        let signature = MinisignSignature.sign(
            fileDigest: BLAKE2b.hash(output, outputByteCount: 64), with: keys.signingKey,
            trustedComment: trustedComment(
                vaultID: keys.vaultID.bytes, sequence: sequence, created: header.created, fileName: fileName,
                device: device, commitCounter: commitCounter),
            untrustedComment:
                "signature from Coffer vault key \(MinisignPublicKey(key: keys.signingKey.publicKey).keyIDText)")
        return (output, signature.fileContents)
    }

    /// Makes an archive of `records` and writes it into `directory` (`make`, then `write(_:to:)`).
    public static func write(
        _ records: CollectedRecords, layouts: [UInt16: ColumnLayout] = [:], netWorth: String,
        appVersion: String, commitCounter: UInt64, device: DeviceID? = nil, keys: BackupKeys, sequence: UInt64,
        created: Date, to directory: URL
    ) throws -> (url: URL, recordCount: Int) {
        let made = try make(
            records, layouts: layouts, netWorth: netWorth, appVersion: appVersion, commitCounter: commitCounter,
            device: device, keys: keys, sequence: sequence, created: created)
        return (try write(made, to: directory), made.recordCount)
    }

    /// Writes a made archive and its `.minisig` into `directory`: each under a `.partial` name,
    /// fsynced, then renamed, then the directory fsynced. On failure nothing with a final name
    /// is left. The caller must still read it back and verify it before calling it a backup.
    public static func write(_ made: Made, to directory: URL) throws -> URL {
        let (name, bytes, signature) = (made.name, made.bytes, made.signature)
        let url = directory.appendingPathComponent(name)
        let signatureURL = signatureURL(for: url)
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw BackupError(.writeFailed, "\(url.path) already exists; nothing was written.")
        }
        let partialArchive = directory.appendingPathComponent(".\(name).partial")
        let partialSignature = directory.appendingPathComponent(".\(name).minisig.partial")
        do {
            try createSynced(partialArchive, containing: bytes)
            try createSynced(partialSignature, containing: Array(signature.utf8))
            try renameOrThrow(partialArchive, to: url)
            try renameOrThrow(partialSignature, to: signatureURL)
            DurableFile.syncDirectory(directory)
            return url
        } catch {
            for leftover in [partialArchive, partialSignature, url, signatureURL] { unlink(leftover.path) }
            throw error
        }
    }

    /// Removes an archive and its signature (after a failed read-back, or when pruning).
    public static func remove(_ url: URL) {
        unlink(url.path)
        unlink(signatureURL(for: url).path)
        DurableFile.syncDirectory(url.deletingLastPathComponent())
    }

    // MARK: Verification, level 1: signature and structure, no passphrase

    /// Archive headers are at most this long (the archived vault header's length is a u16).
    static let maximumHeaderLength = 1 << 17
    /// No archive Coffer writes is larger: the content cap plus framing and xz overhead.
    static let maximumArchiveSize = Int(maximumPlaintextLength) + Int(maximumPlaintextLength >> 10) + (1 << 20)
    static let maximumSignatureFileSize = 1 << 14
    /// No vault makes more archives than this; a larger signed number is refused, so numbering
    /// after it can never overflow.
    public static let maximumSequence: UInt64 = 1 << 40

    /// Checks an archive against one key (see `verify(at:trust:)`).
    public static func verify(at url: URL, publicKey: MinisignPublicKey) throws -> ArchiveInfo {
        try verify(at: url, trust: ArchiveTrust(publicKeys: [publicKey]))
    }

    /// Checks the signature against the trusted keys, that the trusted comment matches the header
    /// (vault, sequence, time, and the sequence in the file name), and the chunk framing to the
    /// exact end of the file. Decrypts nothing. The signature file is read and its key looked up
    /// first, so an unsigned or foreign file costs one small read; then the header and framing,
    /// so a file that is no archive is never hashed; the archive itself is streamed, so memory
    /// stays bounded whatever its size.
    public static func verify(at url: URL, trust: ArchiveTrust) throws -> ArchiveInfo {
        let (signature, trusted) = try trustedSignature(for: url, trust: trust)
        let file = try openBounded(url)
        let (header, chunkCount) = try checkStructure(of: file)
        return try checkSignature(
            signature, by: trusted, trust: trust, header: header, digest: try file.digest(),
            url: url, size: file.size, chunkCount: chunkCount)
    }

    /// Verifies and opens an archive in one read of the file: everything `verify(at:trust:)`
    /// proves, then everything `open(at:keys:)` checks, on the same bytes, so what the
    /// signature covers is exactly what is decrypted, and a restore reads a large archive once
    /// instead of three times. The order of checks is `verify`'s: the signature file is read and
    /// its key looked up first (an unsigned or foreign archive costs one small read), then the
    /// size cap and the structure (small reads), then the one whole read, whose signature is
    /// checked before any of its contents is decrypted or trusted.
    /// `visit` sees every record as it is read (its payload valid only during the call); nothing
    /// else keeps them.
    public static func open(
        at url: URL, keys: BackupKeys, trust: ArchiveTrust,
        visit: ((RecordID, UnsafeRawBufferPointer) throws -> Void)? = nil
    ) throws -> (contents: ArchiveContents, info: ArchiveInfo) {
        let (signature, trusted) = try trustedSignature(for: url, trust: trust)
        let file = try openBounded(url)
        _ = try checkStructure(of: file)
        let bytes = try file.read(at: 0, count: file.size)
        // Everything from here on reads these bytes, not the file, which may change meanwhile.
        let (header, headerLength) = try ArchiveHeader.parse(bytes)
        let chunks = try chunkRanges(bytes, from: headerLength)
        let info = try checkSignature(
            signature, by: trusted, trust: trust, header: header, digest: BLAKE2b.hash(bytes, outputByteCount: 64),
            url: url, size: bytes.count, chunkCount: chunks.count)
        return (
            try decrypt(
                bytes, header: header, headerLength: headerLength, chunks: chunks, keys: keys,
                name: url.lastPathComponent, visit: visit), info
        )
    }

    /// The signature beside the archive and the trusted key that made it: read and looked up
    /// before the archive is touched.
    static func trustedSignature(for url: URL, trust: ArchiveTrust) throws -> (MinisignSignature, ArchiveTrust.Key) {
        let signature = try MinisignSignature(parsing: try readSignature(for: url))
        guard let trusted = trust.key(withID: signature.keyID) else {
            throw BackupError(
                .untrusted,
                "\(url.lastPathComponent) fails its signature: it was signed by another key (key id \(signature.keyIDText)), not one of this vault's \(trust.keys.count) key\(trust.keys.count == 1 ? "" : "s")."
            )
        }
        return (signature, trusted)
    }

    /// The archive file, refused unread when it is larger than any archive Coffer writes.
    static func openBounded(_ url: URL) throws -> ArchiveFile {
        let file = try ArchiveFile(url)
        guard file.size <= maximumArchiveSize else {
            throw BackupError(
                .damaged,
                "\(url.lastPathComponent) is \(file.size) bytes, larger than any archive Coffer writes; it was not read."
            )
        }
        return file
    }

    /// The header and the chunk framing to the exact end of the file, in a few small reads, so a
    /// planted file of gigabytes that is no archive is refused before it is read whole or hashed.
    static func checkStructure(of file: borrowing ArchiveFile) throws -> (header: ArchiveHeader, chunkCount: Int) {
        let (header, headerLength) = try ArchiveHeader.parse(
            try file.read(at: 0, count: min(file.size, maximumHeaderLength)))
        return (header, try chunkRanges(size: file.size, from: headerLength) { try file.read(at: $0, count: 4) }.count)
    }

    /// What a good signature by `trusted` over `digest` proves, checked against the header: the
    /// signer it names, the vault, the signed description, and the key's time of trust.
    static func checkSignature(
        _ signature: MinisignSignature, by trusted: ArchiveTrust.Key, trust: ArchiveTrust, header: ArchiveHeader,
        digest: [UInt8], url: URL, size: Int, chunkCount: Int
    ) throws -> ArchiveInfo {
        let name = url.lastPathComponent
        if let failure = signature.failure(fileDigest: digest, publicKey: trusted.publicKey) {
            throw BackupError(.damaged, "\(name) fails its signature: \(failure).")
        }
        guard header.signer == trusted.publicKey.key else {
            throw BackupError(.untrusted, "\(name) names a different signer in its header than the key that signed it.")
        }
        if let vaultID = trust.vaultID, header.vaultID != vaultID {
            throw BackupError(.untrusted, "\(name) belongs to another vault.")
        }
        let fields = try checkTrustedComment(signature.trustedComment, header: header, fileName: name)
        if let supersededAt = trusted.supersededAt, TimeInterval(header.created) > supersededAt.timeIntervalSince1970 {
            throw BackupError(
                .untrusted,
                "\(name) is signed by key generation \(trusted.generation ?? 0) with a time after that key was superseded (\(ISO8601DateFormatter().string(from: supersededAt))): the vault did not make it; whoever still holds that old key (a session or the passphrase of before a rekey) could have."
            )
        }
        return ArchiveInfo(
            url: url, vaultID: header.vaultID.hexString, sequence: header.sequence,
            created: Date(timeIntervalSince1970: TimeInterval(header.created)), size: size, chunkCount: chunkCount,
            digest: digest, signedName: fields["file"], device: fields["device"],
            commitCounter: fields["commit"].flatMap { UInt64($0) }, generation: trusted.generation)
    }

    /// The signed description's fields, after checking them against the header.
    static func checkTrustedComment(_ comment: String, header: ArchiveHeader, fileName: String) throws -> [String:
        String]
    {
        let fields = trustedCommentFields(comment)
        let vaultHex = header.vaultID.hexString
        guard comment.hasPrefix("coffer-archive v1 "), fields["vault"] == vaultHex, header.sequence <= maximumSequence,
            fields["seq"] == String(header.sequence), fields["time"] == String(header.created)
        else {
            throw BackupError(
                .damaged,
                "\(fileName): its signed description (vault, sequence, time) does not match its header: the header or body was spliced from another archive."
            )
        }
        if let nameSequence = sequence(inFileName: fileName), nameSequence != header.sequence {
            throw BackupError(
                .damaged,
                "\(fileName): its name says sequence \(nameSequence) but it is signed as sequence \(header.sequence): an older archive replayed under a newer name."
            )
        }
        return fields
    }

    /// The sequence number in a `coffer-…-<seq>.cbak` name, if the name has that shape.
    static func sequence(inFileName name: String) -> UInt64? {
        guard name.hasPrefix("coffer-"), name.hasSuffix(".\(fileExtension)") else { return nil }
        let stem = name.dropLast(fileExtension.count + 1)
        return stem.split(separator: "-").last.flatMap { UInt64($0) }
    }

    /// The byte ranges of the sealed chunks; the framing must end exactly at the end of file.
    static func chunkRanges(_ bytes: [UInt8], from start: Int) throws -> [Range<Int>] {
        try chunkRanges(size: bytes.count, from: start) { Array(bytes[$0..<$0 + 4]) }
    }

    /// The same, reading each 4-byte length prefix through `lengthAt` (from memory or a file).
    static func chunkRanges(size: Int, from start: Int, lengthAt: (Int) throws -> [UInt8]) throws -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var offset = start
        while offset < size {
            guard size - offset >= 4 else {
                throw BackupError(.damaged, "The archive is truncated inside a chunk header.")
            }
            let length = Int(try lengthAt(offset).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            offset += 4
            guard length >= SecretStream.overheadByteCount, length <= chunkSize + SecretStream.overheadByteCount else {
                throw BackupError(.damaged, "The archive has a malformed chunk at byte \(offset - 4).")
            }
            guard size - offset >= length else {
                throw BackupError(.damaged, "The archive is truncated: its last chunk is incomplete.")
            }
            ranges.append(offset..<offset + length)
            offset += length
        }
        guard !ranges.isEmpty else { throw BackupError(.damaged, "The archive is truncated: it has no content.") }
        return ranges
    }

    // MARK: Verification, level 2: decrypt, decompress, parse, compare

    /// What an archive's header says, read without a key or signature: for dates in messages
    /// and to find the vault header its keys derive from.
    public struct Peek: Sendable {
        public let vaultID: [UInt8]
        public let sequence: UInt64
        public let created: Date
        /// The vault header when the archive was made: the passphrase of that time derives the
        /// archive's keys from it (`Vault.unlockArchivedHeader(_:credential:)`).
        public let vaultHeader: [UInt8]
    }

    /// Reads only the archive header (bounded), never the body.
    public static func peek(at url: URL) throws -> Peek {
        let file = try ArchiveFile(url)
        let (header, _) = try ArchiveHeader.parse(try file.read(at: 0, count: min(file.size, maximumHeaderLength)))
        return Peek(
            vaultID: header.vaultID, sequence: header.sequence,
            created: Date(timeIntervalSince1970: TimeInterval(header.created)),
            vaultHeader: header.vaultHeader)
    }

    /// Whether a signature file sits beside the archive (checked before any key work: an unsigned
    /// archive is refused before its Argon2id parameters cost anything).
    public static func signature(for url: URL) throws -> MinisignSignature {
        try MinisignSignature(parsing: try readSignature(for: url))
    }

    /// Decrypts and authenticates every chunk (all of them, before liblzma sees a byte), checks
    /// that the stream ends with its final chunk exactly at the end of the file, decompresses
    /// within a memory limit to exactly the declared length, and checks every record against
    /// the manifest.
    public static func open(
        at url: URL, keys: BackupKeys, visit: ((RecordID, UnsafeRawBufferPointer) throws -> Void)? = nil
    ) throws -> ArchiveContents {
        let bytes = try readFile(url)
        let (header, headerLength) = try ArchiveHeader.parse(bytes)
        return try decrypt(
            bytes, header: header, headerLength: headerLength, chunks: try chunkRanges(bytes, from: headerLength),
            keys: keys, name: url.lastPathComponent, visit: visit)
    }

    /// Everything `open(at:keys:)` checks, on an archive's bytes already read and parsed.
    static func decrypt(
        _ bytes: [UInt8], header: ArchiveHeader, headerLength: Int, chunks: [Range<Int>], keys: BackupKeys,
        name: String, visit: ((RecordID, UnsafeRawBufferPointer) throws -> Void)?
    ) throws -> ArchiveContents {
        guard header.vaultID == keys.vaultID.bytes else {
            throw BackupError(.untrusted, "\(name) belongs to another vault.")
        }
        guard header.signer == keys.signingKey.publicKey else {
            throw BackupError(.untrusted, "\(name) names a signer that is not this vault's key.")
        }
        guard header.plaintextLength <= maximumPlaintextLength else {
            throw BackupError(
                .damaged, "\(name) declares \(header.plaintextLength) bytes of content, more than Coffer accepts.")
        }
        // Format 1 is decompressed whole into memory of the declared size, so a declared size far
        // beyond any real compression ratio is refused first; formats 2 to 4 are read in bounded pieces.
        guard
            header.formatVersion >= 2
                || header.plaintextLength <= UInt64(bytes.count - headerLength) * maximumCompressionRatio + (1 << 20)
        else {
            throw BackupError(
                .damaged,
                "\(name) declares \(header.plaintextLength) bytes of content in \(bytes.count - headerLength) compressed: far more than Coffer's archives ever compress. It was not decompressed."
            )
        }
        let fileKeySecret: SecureBytes
        do {
            fileKeySecret = try XChaCha20Poly1305.openSecret(
                header.wrappedFileKey, key: keys.backupKey, nonce: header.fileKeyNonce,
                associatedData: ArchiveHeader.fileKeyAssociatedData(header.boundPrefix))
        } catch {
            throw BackupError(.damaged, "\(name): the archive key does not unwrap: its header was altered.")
        }
        let decryptor = try SecretStreamDecryptor(key: try SymmetricKey(fileKeySecret), header: header.streamHeader)
        let chunkAD = BLAKE2b.hash(Array(bytes[..<headerLength]))
        // Each chunk decrypted straight into its place: the plaintext is never larger.
        let compressed = try [UInt8](unsafeUninitializedCapacity: bytes.count - headerLength) { body, filled in
            for (index, range) in chunks.enumerated() {
                guard !decryptor.isFinished else {
                    throw BackupError(.damaged, "\(name) has data after its final chunk (appended).")
                }
                do {
                    filled += try bytes[range].withUnsafeBytes { chunk in
                        try chunkAD.withUnsafeBytes {
                            try decryptor.pull(
                                chunk,
                                into: UnsafeMutableRawBufferPointer(
                                    UnsafeMutableBufferPointer(rebasing: body[filled...])),
                                associatedData: $0)
                        }
                    }
                } catch {
                    throw BackupError(
                        .damaged,
                        "\(name): chunk \(index + 1) does not authenticate (altered, reordered, or from another archive)."
                    )
                }
            }
        }
        guard decryptor.isFinished else {
            throw BackupError(.damaged, "\(name) is truncated: it ends before its final chunk.")
        }
        let manifest: ExportFormat.Manifest
        if header.formatVersion == 1 {
            let export = try XZ.decompress(compressed, expectedLength: Int(header.plaintextLength))
            let records: [(RecordID, Data)]
            (manifest, records) = try ExportFormat.decode(export)
            if let visit { for (id, payload) in records { try payload.withUnsafeBytes { try visit(id, $0) } } }
        } else {
            manifest = try compressed.withUnsafeBytes {
                try ColumnExport.read(
                    $0, format: header.formatVersion, exportLength: header.plaintextLength, visit: visit)
            }
        }
        return ArchiveContents(
            vaultID: header.vaultID.hexString, sequence: header.sequence,
            created: Date(timeIntervalSince1970: TimeInterval(header.created)), vaultHeader: header.vaultHeader,
            recordCount: Int(manifest.recordCount), countsByKind: manifest.countsByKind,
            netWorth: manifest.netWorth, appVersion: manifest.appVersion, commitCounter: manifest.commitCounter)
    }

    // MARK: Files

    /// The whole archive, for full verification (whose content is bounded by the declared-size cap).
    static func readFile(_ url: URL) throws -> [UInt8] {
        let file = try openBounded(url)
        return try file.read(at: 0, count: file.size)
    }

    static func readSignature(for url: URL) throws -> String {
        let signatureURL = signatureURL(for: url)
        guard FileManager.default.fileExists(atPath: signatureURL.path) else {
            throw BackupError(
                .untrusted,
                "\(url.lastPathComponent) is unsigned: there is no \(url.lastPathComponent).minisig beside it.")
        }
        let file = try ArchiveFile(signatureURL)
        guard file.size <= maximumSignatureFileSize else {
            throw BackupError(.damaged, "\(signatureURL.lastPathComponent) is too large to be a signature.")
        }
        return String(decoding: try file.read(at: 0, count: file.size), as: UTF8.self)
    }

    /// A new file under its temporary name (`DurableFile.create`), failures worded as a backup's.
    static func createSynced(_ url: URL, containing bytes: [UInt8]) throws {
        do {
            try DurableFile.create(url, containing: bytes)
        } catch {
            throw writeError(url, code: error.code.rawValue)
        }
    }

    static func renameOrThrow(_ source: URL, to destination: URL) throws {
        guard rename(source.path, destination.path) == 0 else { throw writeError(destination, code: errno) }
    }

    static func writeError(_ url: URL, code: Int32) -> BackupError {
        let reason =
            switch code {
            case ENOSPC, EDQUOT: "the disk is full"
            case EFBIG: "the file is over a file-size limit"
            default: String(cString: strerror(code))
            }
        return BackupError(
            .writeFailed, "Cannot write \(url.lastPathComponent) in \(url.deletingLastPathComponent().path): \(reason)"
        )
    }
}

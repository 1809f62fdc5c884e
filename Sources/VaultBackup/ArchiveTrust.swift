import Foundation
import VaultCrypto
import VaultStore

#if canImport(Glibc)
    import Glibc
#endif

/// The keys an archive may be signed by: every generation of one vault's signing key, from the
/// vault's own key history (each generation certified by the one before), or keys the user named
/// explicitly. An archive signed by any of them is this vault's; which one tells its generation.
public struct ArchiveTrust: Sendable {
    public struct Key: Sendable, Equatable {
        /// The key generation, when the key came from a key history (nil for a bare key file).
        public let generation: UInt32?
        public let publicKey: MinisignPublicKey
        /// When the next generation was certified: an archive this key signed with a later time
        /// was not made by the vault (whoever still holds a superseded key — a session or the
        /// passphrase of before a rekey — could sign one), so it is refused. Nil for the vault's
        /// own current key and the newest one learnt.
        public let supersededAt: Date?
    }

    /// Oldest first.
    public let keys: [Key]
    /// The vault whose history this is (nil for explicit key files, which name no vault).
    public let vaultID: [UInt8]?
    /// Set when archives in the folders disagree about the generations after `keys`: someone
    /// holding one of the trusted keys certified another successor. Only the agreed part is kept.
    public let conflictAfter: UInt32?

    public init(vaultID: VaultID, history: [KeyGeneration]) {
        self.init(vaultID: vaultID.bytes, keys: Self.keys(history), conflictAfter: nil)
    }

    public init(publicKeys: [MinisignPublicKey]) {
        self.init(
            vaultID: nil, keys: publicKeys.map { Key(generation: nil, publicKey: $0, supersededAt: nil) },
            conflictAfter: nil)
    }

    private init(vaultID: [UInt8]?, keys: [Key], conflictAfter: UInt32?) {
        self.vaultID = vaultID
        self.keys = keys
        self.conflictAfter = conflictAfter
    }

    private static func keys(_ history: [KeyGeneration]) -> [Key] {
        history.indices.map { index in
            Key(
                generation: history[index].number, publicKey: MinisignPublicKey(key: history[index].signingKey),
                supersededAt: index + 1 < history.count
                    ? Date(timeIntervalSince1970: TimeInterval(history[index + 1].created)) : nil)
        }
    }

    /// The newest key: the one new archives are signed with.
    public var current: Key? { keys.last }

    public func key(withID id: [UInt8]) -> Key? { keys.last { $0.publicKey.keyID == id } }

    /// How many generations past the trusted ones an archive's history may run to be considered:
    /// a bound on the certificate checks a folder of planted headers can cost.
    static let maximumLearnedGenerations = 64

    /// This trust, with the later key generations that archives in `folders` certify. Every
    /// archive carries the vault header of its time, whose key history is a chain of
    /// certificates; a chain that begins with the generations trusted here was signed by them,
    /// so its later generations are this vault's too. That is how a vault restored from an
    /// older archive still recognises (and numbers after) the archives made after a rekey. When
    /// two chains disagree (whoever holds a trusted key can certify a successor of their own),
    /// only the part they share is learnt, and `conflictAfter` says so.
    public func extended(byArchivesIn folders: [URL]) -> ArchiveTrust {
        guard let vaultID, !keys.isEmpty else { return self }
        var seenHeaders = Set<[UInt8]>()
        var candidates: [[KeyGeneration]] = []
        for folder in folders {
            for name in Archive.archiveNames(in: folder) {
                let url = folder.appendingPathComponent(name)
                guard FileManager.default.fileExists(atPath: Archive.signatureURL(for: url).path),
                    let peek = try? Archive.peek(at: url), peek.vaultID == vaultID,
                    // A history entry is 108 bytes: a header too long to hold at most the
                    // allowed generations is skipped before a single certificate is checked.
                    peek.vaultHeader.count <= 1024 + 108 * (keys.count + Self.maximumLearnedGenerations),
                    seenHeaders.insert(peek.vaultHeader).inserted,
                    let (_, history) = try? Vault.keyHistory(ofHeader: peek.vaultHeader),
                    history.count > keys.count, history.count <= keys.count + Self.maximumLearnedGenerations,
                    zip(keys, history).allSatisfy({ $0.generation == $1.number && $0.publicKey.key == $1.signingKey })
                else { continue }
                candidates.append(history)
            }
        }
        guard let longest = candidates.max(by: { $0.count < $1.count }) else { return self }
        var agreed = longest.count
        for candidate in candidates {
            let shared = zip(candidate, longest).prefix { $0.signingKey == $1.signingKey && $0.number == $1.number }
                .count
            if shared < candidate.count { agreed = min(agreed, shared) }  // it diverges from the longest
        }
        let learnt = Array(longest.prefix(max(agreed, keys.count)))
        let conflict = learnt.count < longest.count ? learnt.last?.number : nil
        // The vault's own key stays unbounded: a vault restored from before a rekey signs with
        // it, and must read back what it writes. The keys learnt after it are bounded as usual.
        return ArchiveTrust(
            vaultID: vaultID, keys: keys + Self.keys(learnt).dropFirst(keys.count), conflictAfter: conflict)
    }
}

/// Reads an archive file a piece at a time, so checking a planted multi-gigabyte `.cbak` costs
/// a bounded amount of memory.
struct ArchiveFile: ~Copyable {
    let url: URL
    let size: Int
    private let descriptor: Int32

    init(_ url: URL) throws {
        self.url = url
        let descriptor = Glibc.open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw BackupError(.notFound, "No archive at \(url.path).") }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw BackupError(.damaged, "\(url.lastPathComponent) is not a regular file.")
        }
        self.descriptor = descriptor
        self.size = Int(status.st_size)
    }

    deinit { close(descriptor) }

    /// Exactly `count` bytes at `offset`, or a "truncated" error.
    func read(at offset: Int, count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = buffer.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset + done))
            }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { throw BackupError(.damaged, "\(url.lastPathComponent) is truncated.") }
            done += got
        }
        return buffer
    }

    /// BLAKE2b-512 of the whole file, streamed (minisign's prehashed signature is over it).
    func digest() throws -> [UInt8] {
        let hasher = BLAKE2bHasher(outputByteCount: 64)
        var offset = 0
        while offset < size {
            let piece = try read(at: offset, count: min(1 << 20, size - offset))
            hasher.update(piece)
            offset += piece.count
        }
        return hasher.finalize()
    }
}

/// What a trusted key signed about one archive, proved by the signature file alone: minisign's
/// global signature covers the trusted comment, so its fields are authentic without reading the
/// archive (whose bytes may since have been damaged). Enough to number the next archive and to
/// notice another copy of the vault, or an older state of this one, backing up to the folder.
public struct SignedDescription: Sendable, Equatable {
    public let url: URL
    public let sequence: UInt64
    public let created: Date
    public let device: String?
    public let commitCounter: UInt64?
    public let generation: UInt32?
    /// Signed by a generation that has since been superseded: such an archive may not steer
    /// anything new (numbering, a rollback refusal), since an old key can outlive its vault's trust.
    public let bySupersededKey: Bool
}

extension Archive {
    /// The signed descriptions of every archive in `folder` that a trusted key signed (others are
    /// skipped: they say nothing about this vault). Reads only the small `.minisig` files.
    public static func signedDescriptions(in folder: URL, trust: ArchiveTrust) -> [SignedDescription] {
        let vaultHex = trust.vaultID?.hexString
        return archiveNames(in: folder).compactMap { name in
            let url = folder.appendingPathComponent(name)
            guard let signature = try? MinisignSignature(parsing: readSignature(for: url)),
                let key = trust.key(withID: signature.keyID),
                key.publicKey.key.isValidSignature(
                    signature.globalSignature, for: signature.signature.bytes + Array(signature.trustedComment.utf8))
            else { return nil }
            let fields = trustedCommentFields(signature.trustedComment)
            guard signature.trustedComment.hasPrefix("coffer-archive v1 "),
                vaultHex == nil || fields["vault"] == vaultHex,
                let sequence = fields["seq"].flatMap({ UInt64($0) }), sequence <= maximumSequence,
                let time = fields["time"].flatMap({ UInt64($0) }),
                key.supersededAt.map({ TimeInterval(time) <= $0.timeIntervalSince1970 }) ?? true
            else { return nil }
            return SignedDescription(
                url: url, sequence: sequence, created: Date(timeIntervalSince1970: TimeInterval(time)),
                device: fields["device"], commitCounter: fields["commit"].flatMap { UInt64($0) },
                generation: key.generation,
                bySupersededKey: key.supersededAt != nil)
        }
    }

    /// What the signature file alone proves, checked before any key derivation: that a key of
    /// `trust` signed this archive's description (the global signature over the trusted
    /// comment), for this vault, as the header says, and for a superseded key with a time from
    /// before it was superseded. The archive's bytes are checked later, in the one read that
    /// opens it; an archive failing here costs no Argon2id run and no read of its body.
    public static func checkSignedDescription(of url: URL, peek: Peek, trust: ArchiveTrust) throws {
        let name = url.lastPathComponent
        let signature = try MinisignSignature(parsing: readSignature(for: url))
        guard let key = trust.key(withID: signature.keyID) else {
            throw BackupError(
                .untrusted,
                "\(name) is not signed by any key of this vault (its signature names key \(signature.keyIDText)).")
        }
        guard
            key.publicKey.key.isValidSignature(
                signature.globalSignature, for: signature.signature.bytes + Array(signature.trustedComment.utf8))
        else { throw BackupError(.damaged, "\(name) fails its signature: its signed description was altered.") }
        let fields = trustedCommentFields(signature.trustedComment)
        guard signature.trustedComment.hasPrefix("coffer-archive v1 "), fields["vault"] == peek.vaultID.hexString,
            fields["seq"] == String(peek.sequence), fields["time"] == String(UInt64(peek.created.timeIntervalSince1970))
        else { throw BackupError(.untrusted, "\(name)'s signed description does not match its header.") }
        if let vaultID = trust.vaultID, peek.vaultID != vaultID {
            throw BackupError(.untrusted, "\(name) belongs to another vault.")
        }
        if let supersededAt = key.supersededAt, peek.created > supersededAt {
            throw BackupError(
                .untrusted,
                "\(name) is signed by key generation \(key.generation ?? 0) with a time after that key was superseded (\(ISO8601DateFormatter().string(from: supersededAt))): the vault did not make it; whoever still holds that old key (a session or the passphrase of before a rekey) could have."
            )
        }
    }

    /// The names of the archive files in a folder (partial writes, which start with a dot, are not).
    static func archiveNames(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasSuffix(".\(fileExtension)") && !$0.hasPrefix(".") }.sorted()
    }

    static func trustedCommentFields(_ comment: String) -> [String: String] {
        var fields: [String: String] = [:]
        for part in comment.split(separator: " ") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { fields[String(pair[0])] = String(pair[1]) }
        }
        return fields
    }

    /// The name under which a folder holds generation `number` of a vault's public key.
    public static func publicKeyFileName(vaultID: VaultID, generation: UInt32) -> String {
        "coffer-\(vaultID.hex)-key-\(generation).pub"
    }

    /// One generation's public key in minisign's format, its comment naming vault and generation
    /// (the same bytes beside the vault, beside the archives and from `backup pubkey`).
    public static func publicKeyFileContents(_ generation: KeyGeneration, vaultID: VaultID) -> String {
        MinisignPublicKey(key: generation.signingKey).fileContents(
            describing: "Coffer vault \(vaultID.hex), key generation \(generation.number)")
    }

    /// Writes every generation's public key beside the archives (missing or different files
    /// only), so a fresh machine can check archives, with Coffer or stock minisign, before it
    /// has the vault. These files are as trustworthy as the folder: Coffer itself trusts the
    /// vault's key history over them.
    public static func writePublicKeys(_ history: [KeyGeneration], vaultID: VaultID, into folder: URL) throws {
        for generation in history {
            let contents = publicKeyFileContents(generation, vaultID: vaultID)
            let url = folder.appendingPathComponent(publicKeyFileName(vaultID: vaultID, generation: generation.number))
            guard FileManager.default.contents(atPath: url.path) != Data(contents.utf8) else { continue }
            do {
                try DurableFile.replace(url, with: Array(contents.utf8))
            } catch {
                throw writeError(url, code: error.code.rawValue)
            }
        }
    }

    /// The public keys of `vaultID` found beside the archives in `folder` (unauthenticated:
    /// used only to check a signature before costly key derivation, never as proof of origin).
    public static func folderPublicKeys(in folder: URL, vaultID: [UInt8]) -> [MinisignPublicKey] {
        let prefix = "coffer-\(vaultID.hexString)-key-"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".pub") }
            .compactMap { name -> MinisignPublicKey? in
                guard let file = try? ArchiveFile(folder.appendingPathComponent(name)), file.size <= 4096,
                    let bytes = try? file.read(at: 0, count: file.size)
                else { return nil }
                return try? MinisignPublicKey(parsing: String(decoding: bytes, as: UTF8.self))
            }
    }
}

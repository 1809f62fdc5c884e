import Foundation
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

/// The secret half of an unlock session, handed to the user as `COFFER_SESSION`.
///
/// The session file holds the master key wrapped under `secret`; without the token the file is
/// useless, and without the file the token is. Text form: `cs1_` + base64url(id ‖ secret).
public struct SessionToken: Sendable {
    static let prefix = "cs1_"
    static let idByteCount = 16

    let id: [UInt8]
    let secret: SymmetricKey

    static func generate() -> SessionToken {
        SessionToken(id: SecureRandom.bytes(count: idByteCount), secret: .random())
    }

    private init(id: [UInt8], secret: SymmetricKey) {
        self.id = id
        self.secret = secret
    }

    public init(parsing text: String) throws {
        let invalid = VaultError(.sessionInvalid,
            "COFFER_SESSION is not a valid session token. Unlock again: eval \"$(coffer unlock)\"")
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(Self.prefix) else { throw invalid }
        var base64 = String(trimmed.dropFirst(Self.prefix.count))
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard var raw = Data(base64Encoded: base64).map(Array.init),
              raw.count == Self.idByteCount + SymmetricKey.byteCount else { throw invalid }
        defer { secureWipe(&raw) }
        id = Array(raw[..<Self.idByteCount])
        secret = try SymmetricKey(SecureBytes(copying: Array(raw[Self.idByteCount...])))
    }

    /// The token as the user sees it; printed once by `coffer unlock`.
    public var exportText: String {
        secret.withUnsafeBytes { secretBytes in
            let encoded = Data(id + Array(secretBytes)).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            return Self.prefix + encoded
        }
    }
}

extension SessionToken: CustomStringConvertible, CustomReflectable {
    public var description: String { "SessionToken(redacted)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// Session files (Specs/vault-format.md, "Sessions"):
///
///     magic "CFRSESS1" ‖ vault id 16 ‖ expiry u64 (Unix seconds) ‖ nonce 24 ‖ wrapped master key 48
///
/// The wrapping's associated data is magic ‖ session id ‖ vault id ‖ expiry, so moving the
/// expiry, or the file to another vault, makes it fail to open.
public enum SessionStore {
    static let magic = Array("CFRSESS1".utf8)
    static let fileExtension = "session"
    static let fileByteCount = 8 + 16 + 8 + 24 + 48

    /// `$XDG_RUNTIME_DIR/coffer` (a per-user tmpfs, emptied at logout), else
    /// `$TMPDIR/coffer-<uid>` or `/tmp/coffer-<uid>`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return URL(fileURLWithPath: runtime).appendingPathComponent("coffer")
        }
        let temporary = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return URL(fileURLWithPath: temporary).appendingPathComponent("coffer-\(getuid())")
    }

    /// Creates the directory 0700 if missing; refuses one that another user owns or that others
    /// can read, since a planted directory could collect or swap session files.
    static func preparePrivateDirectory(_ directory: URL) throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw VaultError(.storageFailure, "Cannot create the session directory \(directory.path).")
        }
        var info = stat()
        guard lstat(directory.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw VaultError(.insecureDirectory, "The session directory \(directory.path) is not a directory.")
        }
        guard info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
            throw VaultError(.insecureDirectory,
                "The session directory \(directory.path) must belong to you and be private (mode 0700). Fix it or remove it.")
        }
    }

    static func fileURL(id: [UInt8], directory: URL) -> URL {
        directory.appendingPathComponent("\(id.hexString).\(fileExtension)")
    }

    private static func associatedData(id: [UInt8], vaultID: VaultID, expiry: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: 48)
        writer.append(magic)
        writer.append(id)
        writer.append(vaultID.bytes)
        writer.append(expiry)
        return writer.bytes
    }

    static func create(master: SymmetricKey, vaultID: VaultID, lifetime: TimeInterval, directory: URL, now: Date) throws -> SessionToken {
        try preparePrivateDirectory(directory)
        removeExpired(directory: directory, now: now)
        let token = SessionToken.generate()
        let expiry = UInt64((now.timeIntervalSince1970 + lifetime).rounded(.up))
        let nonce = AEADNonce.random()
        let wrapped = master.withUnsafeBytes { plain in
            associatedData(id: token.id, vaultID: vaultID, expiry: expiry).withUnsafeBytes {
                XChaCha20Poly1305.seal(plain, key: token.secret, nonce: nonce, associatedData: $0)
            }
        }
        var writer = ByteWriter(capacity: fileByteCount)
        writer.append(magic)
        writer.append(vaultID.bytes)
        writer.append(expiry)
        writer.append(nonce.bytes)
        writer.append(wrapped)
        try writePrivateFileAtomically(writer.bytes, to: fileURL(id: token.id, directory: directory))
        return token
    }

    private struct SessionFile {
        let vaultID: VaultID
        let expiry: UInt64
        let nonce: AEADNonce
        let wrapped: [UInt8]

        init?(_ bytes: [UInt8]) {
            guard bytes.count == SessionStore.fileByteCount, Array(bytes[0..<8]) == SessionStore.magic else { return nil }
            var reader = ByteReader(bytes[8...], onTruncation: { VaultError(.sessionInvalid, "truncated") })
            guard let vault = try? reader.read(VaultID.byteCount), let expiry = try? reader.readUInt64(),
                  let nonce = try? AEADNonce(reader.read(AEADNonce.byteCount)),
                  let wrapped = try? reader.read(KeySlot.wrappedKeyByteCount) else { return nil }
            vaultID = VaultID(unchecked: vault)
            self.expiry = expiry
            self.nonce = nonce
            self.wrapped = wrapped
        }
    }

    static func unwrapMasterKey(token: SessionToken, directory: URL, header: VaultHeader, now: Date) throws -> SymmetricKey {
        let unlockHint = "Unlock again: eval \"$(coffer unlock)\""
        let url = fileURL(id: token.id, directory: directory)
        guard let bytes = FileManager.default.contents(atPath: url.path).map(Array.init) else {
            throw VaultError(.sessionNotFound, "No unlocked session matches COFFER_SESSION: it was locked, or has expired. \(unlockHint)")
        }
        guard let file = SessionFile(bytes) else {
            throw VaultError(.sessionInvalid, "The session file is damaged. \(unlockHint)")
        }
        let ad = associatedData(id: token.id, vaultID: file.vaultID, expiry: file.expiry)
        guard let secret = try? XChaCha20Poly1305.openSecret(file.wrapped, key: token.secret, nonce: file.nonce, associatedData: ad),
              let master = try? SymmetricKey(secret) else {
            throw VaultError(.sessionInvalid, "COFFER_SESSION does not open its session file (the file was altered or the token mistyped). \(unlockHint)")
        }
        guard file.vaultID == header.vaultID else {
            throw VaultError(.sessionInvalid, "COFFER_SESSION was unlocked for a different vault. \(unlockHint)")
        }
        guard Double(file.expiry) > now.timeIntervalSince1970 else {
            wipeAndRemove(url)
            throw VaultError(.sessionExpired, "The session has expired. \(unlockHint)")
        }
        guard constantTimeEqual(VaultKeys(master: master).masterKeyID, header.masterKeyID) else {
            throw VaultError(.sessionInvalid, "The vault was rekeyed after this session was unlocked. \(unlockHint)")
        }
        return master
    }

    /// What a session token amounts to for `vaultID`, without opening the vault: for `status`.
    public enum Status: Equatable {
        case active(expiresAt: Date)
        case expired
        case notFound
        case invalid
    }

    public static func status(token: SessionToken, directory: URL, vaultID: VaultID, now: Date = Date()) -> Status {
        guard let bytes = FileManager.default.contents(atPath: fileURL(id: token.id, directory: directory).path).map(Array.init) else {
            return .notFound
        }
        guard let file = SessionFile(bytes), file.vaultID == vaultID,
              (try? XChaCha20Poly1305.openSecret(file.wrapped, key: token.secret, nonce: file.nonce,
                                                 associatedData: associatedData(id: token.id, vaultID: file.vaultID, expiry: file.expiry))) != nil
        else { return .invalid }
        let expiry = Date(timeIntervalSince1970: Double(file.expiry))
        return expiry > now ? .active(expiresAt: expiry) : .expired
    }

    /// Removes the token's session file. Returns whether there was one.
    @discardableResult
    public static func remove(token: SessionToken, directory: URL) -> Bool {
        wipeAndRemove(fileURL(id: token.id, directory: directory))
    }

    /// Removes every session file for `vaultID` (readable without any secret). Returns how many.
    @discardableResult
    public static func removeAll(vaultID: VaultID, directory: URL) -> Int {
        sessionFiles(in: directory).filter { $0.1?.vaultID == vaultID }.reduce(0) { $0 + (wipeAndRemove($1.0) ? 1 : 0) }
    }

    static func removeExpired(directory: URL, now: Date) {
        for (url, file) in sessionFiles(in: directory) where file.map({ Double($0.expiry) <= now.timeIntervalSince1970 }) ?? false {
            wipeAndRemove(url)
        }
    }

    private static func sessionFiles(in directory: URL) -> [(URL, SessionFile?)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix("." + fileExtension) }.map { name in
            let url = directory.appendingPathComponent(name)
            return (url, FileManager.default.contents(atPath: url.path).flatMap { SessionFile(Array($0)) })
        }
    }

    /// Overwrites the file with zeros before unlinking it, for file systems that do not reuse the
    /// blocks at once (on tmpfs this is belt and braces).
    @discardableResult
    static func wipeAndRemove(_ url: URL) -> Bool {
        let descriptor = Glibc.open(url.path, O_WRONLY | O_NOFOLLOW)
        if descriptor >= 0 {
            var info = stat()
            if fstat(descriptor, &info) == 0, info.st_size > 0 {
                let zeros = [UInt8](repeating: 0, count: Int(info.st_size))
                _ = zeros.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                fsync(descriptor)
            }
            close(descriptor)
        }
        return unlink(url.path) == 0
    }
}

/// Writes `bytes` to a new 0600 file beside `url`, fsyncs it, renames it over `url` and fsyncs
/// the directory: readers see the old file or the new one, never a partial one.
func writePrivateFileAtomically(_ bytes: [UInt8], to url: URL) throws {
    let temporary = url.deletingLastPathComponent()
        .appendingPathComponent(".\(url.lastPathComponent).\(SecureRandom.bytes(count: 6).hexString).tmp")
    let descriptor = Glibc.open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
    guard descriptor >= 0 else {
        throw VaultError(.storageFailure, "Cannot write \(url.path): \(String(cString: strerror(errno))).")
    }
    var ok = bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { return false }
            offset += written
        }
        return true
    }
    ok = ok && fsync(descriptor) == 0
    let savedErrno = errno
    close(descriptor)
    guard ok, rename(temporary.path, url.path) == 0 else {
        unlink(temporary.path)
        throw VaultError(.storageFailure, "Cannot write \(url.path): \(String(cString: strerror(savedErrno))).")
    }
    syncDirectory(url.deletingLastPathComponent())
}

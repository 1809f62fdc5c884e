import Foundation
import VaultCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The secret half of an unlock session, handed to the user as `COFFER_SESSION`.
///
/// The session file holds the operational subkeys sealed under `secret`; without the token the file is
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
        let invalid = VaultError(.sessionInvalid, "This is not a valid session token.")
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(Self.prefix) else { throw invalid }
        var base64 = String(trimmed.dropFirst(Self.prefix.count))
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard var raw = Data(base64Encoded: base64).map(Array.init),
            raw.count == Self.idByteCount + SymmetricKey.byteCount
        else { throw invalid }
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

/// The clocks a session's expiry is checked against: the wall clock, and the time since boot
/// with the boot's id, so that turning the wall clock back does not revive a session and a
/// reboot ends every session. The uptime comes from `/proc/uptime` (a file, which clock-faking
/// preload libraries do not reach).
struct SessionClock {
    var now: Date
    var uptime: TimeInterval?
    var bootID: [UInt8]?

    static func system(now: Date = Date()) -> SessionClock {
        SessionClock(now: now, uptime: readUptime(), bootID: readBootID())
    }

    static func readUptime() -> TimeInterval? {
        guard let text = try? String(contentsOfFile: "/proc/uptime", encoding: .utf8),
            let first = text.split(separator: " ").first
        else { return nil }
        return TimeInterval(first)
    }

    static func readBootID() -> [UInt8]? {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else {
            return nil
        }
        let bytes = [UInt8](
            hexString: text.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "-", with: ""))
        return bytes?.count == 16 ? bytes : nil
    }
}

/// Session files (Specs/vault-format.md, "Sessions"):
///
///     "CFRSESS3" ‖ vault id 16 ‖ generation u32 ‖ expiry u64 (Unix s) ‖ boot id 16
///     ‖ boot deadline u64 (ms since boot) ‖ idle timeout u32 (s) ‖ end u64 (Unix s)
///     ‖ boot end u64 (ms since boot) ‖ nonce 24 ‖ sealed operational keys 160
///
/// The expiry slides with use: every command that opens the session moves it to now + idle
/// timeout, never past the end (`--max-age`), which is fixed at unlock. The sealed part holds the
/// records, integrity, backup and signing-seed subkeys and the master key id, never the master
/// key or the header key. Its associated data is the magic, the session id and every clear field,
/// so editing the expiry, the end, the boot fields or the vault makes it fail to open; only a
/// holder of the token can slide it. Format 2 files (fixed expiry, no idle fields) still open.
public enum SessionStore {
    static let magic = Array("CFRSESS3".utf8)
    /// Format 2 files, written by the previous version: a fixed expiry that does not slide.
    static let fixedExpiryMagic = Array("CFRSESS2".utf8)
    /// Format 1 session files held the master key itself; they are refused and wiped.
    static let formerMagic = Array("CFRSESS1".utf8)
    static let fileExtension = "session"
    static let plaintextByteCount = 4 * SymmetricKey.byteCount + 16
    static let fixedExpiryClearByteCount = 8 + 16 + 4 + 8 + 16 + 8
    static let clearByteCount = fixedExpiryClearByteCount + 4 + 8 + 8
    static let sealedByteCount = XChaCha20Poly1305.SealedBox.overheadByteCount + plaintextByteCount
    static let fileByteCount = clearByteCount + sealedByteCount

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
        try ensurePrivateDirectory(directory, what: "session directory")
    }

    static func fileURL(id: [UInt8], directory: URL) -> URL {
        directory.appendingPathComponent("\(id.hexString).\(fileExtension)")
    }

    private static func associatedData(id: [UInt8], clear: [UInt8]) -> [UInt8] {
        Array(clear[..<8]) + id + clear.dropFirst(8)
    }

    /// The clear fields of a format 3 file whose expiry is `idle` from now, capped at the end.
    private static func clearFields(
        vaultID: VaultID, generation: UInt32, idle: TimeInterval, end: UInt64, bootEnd: UInt64, clock: SessionClock
    ) -> [UInt8] {
        var writer = ByteWriter(capacity: clearByteCount)
        writer.append(magic)
        writer.append(vaultID.bytes)
        writer.append(generation)
        writer.append(min(UInt64((clock.now.timeIntervalSince1970 + idle).rounded(.up)), end))
        writer.append(clock.bootID ?? [UInt8](repeating: 0, count: 16))
        writer.append(clock.uptime.map { min(UInt64(($0 + idle) * 1000), bootEnd) } ?? 0)
        writer.append(UInt32(idle.rounded(.up)))
        writer.append(end)
        writer.append(bootEnd)
        return writer.bytes
    }

    /// A session that lasts `idle` after each use, and never beyond `lifetime` after now; with no
    /// idle timeout it lasts exactly `lifetime`.
    static func create(
        keys: OperationalKeys, vaultID: VaultID, generation: UInt32, lifetime: TimeInterval,
        idleTimeout: TimeInterval? = nil, directory: URL, clock: SessionClock
    ) throws -> SessionToken {
        try preparePrivateDirectory(directory)
        removeExpired(directory: directory, clock: clock)
        let token = SessionToken.generate()
        let clear = clearFields(
            vaultID: vaultID, generation: generation, idle: min(idleTimeout ?? lifetime, lifetime),
            end: UInt64((clock.now.timeIntervalSince1970 + lifetime).rounded(.up)),
            bootEnd: clock.uptime.map { UInt64(($0 + lifetime) * 1000) } ?? 0, clock: clock)
        let plain = SecureBytes(count: plaintextByteCount)
        plain.withUnsafeMutableBytes { out in
            var offset = 0
            for key in [keys.records, keys.integrity, keys.backup, keys.signingSeed] {
                key.withUnsafeBytes {
                    (out.baseAddress! + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count)
                }
                offset += SymmetricKey.byteCount
            }
            keys.masterKeyID.withUnsafeBytes {
                (out.baseAddress! + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count)
            }
        }
        try write(plain, clear: clear, token: token, directory: directory)
        return token
    }

    private static func write(_ plain: SecureBytes, clear: [UInt8], token: SessionToken, directory: URL) throws {
        let sealed = plain.withUnsafeBytes {
            XChaCha20Poly1305.seal($0, key: token.secret, associatedData: associatedData(id: token.id, clear: clear))
        }
        try writePrivateFile(clear + sealed.combined, to: fileURL(id: token.id, directory: directory))
    }

    private struct SessionFile {
        let clear: [UInt8]
        let vaultID: VaultID
        let generation: UInt32
        let expiry: UInt64
        let bootID: [UInt8]
        let bootDeadline: UInt64
        /// Zero for a format 2 file, whose expiry never slides.
        let idleTimeout: UInt32
        let end: UInt64
        let bootEnd: UInt64
        let sealed: XChaCha20Poly1305.SealedBox

        init?(_ bytes: [UInt8]) {
            guard bytes.count >= 8 else { return nil }
            let sliding = Array(bytes[0..<8]) == SessionStore.magic
            guard sliding || Array(bytes[0..<8]) == SessionStore.fixedExpiryMagic else { return nil }
            let clearCount = sliding ? SessionStore.clearByteCount : SessionStore.fixedExpiryClearByteCount
            guard bytes.count == clearCount + SessionStore.sealedByteCount else { return nil }
            var reader = ByteReader(bytes[8...], onTruncation: { VaultError(.sessionInvalid, "truncated") })
            guard let vault = try? reader.read(VaultID.byteCount), let generation = try? reader.readUInt32(),
                let expiry = try? reader.readUInt64(), let bootID = try? reader.read(16),
                let deadline = try? reader.readUInt64(),
                let idle = sliding ? (try? reader.readUInt32()) : 0,
                let end = sliding ? (try? reader.readUInt64()) : expiry,
                let bootEnd = sliding ? (try? reader.readUInt64()) : deadline,
                let sealed = try? XChaCha20Poly1305.SealedBox(combined: reader.read(reader.remaining))
            else { return nil }
            clear = Array(bytes[..<clearCount])
            vaultID = VaultID(unchecked: vault)
            self.generation = generation
            self.expiry = expiry
            self.bootID = bootID
            bootDeadline = deadline
            idleTimeout = idle
            self.end = end
            self.bootEnd = bootEnd
            self.sealed = sealed
        }

        /// Nil while the session is valid; otherwise why it is not. Both clocks must agree that
        /// time remains: the wall clock can be turned back, the boot clock cannot. The expiry and
        /// boot deadline never exceed the end and boot end (a writer caps them), but both are
        /// checked so that no slide can outlast `--max-age`.
        func expiryReason(clock: SessionClock) -> String? {
            guard Double(min(expiry, end)) > clock.now.timeIntervalSince1970 else { return "The session has expired." }
            let recordedBoot = bootID != [UInt8](repeating: 0, count: 16) ? bootID : nil
            if let recordedBoot, let current = clock.bootID, recordedBoot != current {
                return "The session ended when the computer restarted."
            }
            if recordedBoot != nil, clock.bootID == nil {
                return "The session cannot be checked against this computer's boot clock."
            }
            if bootDeadline > 0, let uptime = clock.uptime, uptime * 1000 >= Double(min(bootDeadline, bootEnd)) {
                return "The session has expired."
            }
            return nil
        }
    }

    static func unwrapKeys(token: SessionToken, directory: URL, header: VaultHeader, clock: SessionClock) throws
        -> OperationalKeys
    {
        defer { removeExpired(directory: directory, clock: clock) }
        let url = fileURL(id: token.id, directory: directory)
        guard let bytes = FileManager.default.contents(atPath: url.path).map(Array.init) else {
            throw VaultError(
                .sessionNotFound, "No unlocked session matches the session token: it was locked, or has expired.")
        }
        if bytes.count >= 8, Array(bytes[0..<8]) == formerMagic {
            wipeAndRemove(url)
            throw VaultError(
                .sessionInvalid,
                "This session was made by an older Coffer, whose sessions held the master key; it has been removed.")
        }
        guard let file = SessionFile(bytes) else {
            throw VaultError(.sessionInvalid, "The session file is damaged.")
        }
        let ad = associatedData(id: token.id, clear: file.clear)
        guard let plain = try? XChaCha20Poly1305.openSecret(file.sealed, key: token.secret, associatedData: ad),
            plain.count == plaintextByteCount
        else {
            throw VaultError(
                .sessionInvalid,
                "The session token does not open its session file (the file was altered or the token mistyped).")
        }
        guard file.vaultID == header.vaultID else {
            throw VaultError(.sessionInvalid, "The session token was unlocked for a different vault.")
        }
        if let reason = file.expiryReason(clock: clock) {
            wipeAndRemove(url)
            throw VaultError(.sessionExpired, reason)
        }
        let keys = plain.withUnsafeBytes { raw -> OperationalKeys in
            func key(_ index: Int) -> SymmetricKey {
                try! SymmetricKey(
                    SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[index * 32..<(index + 1) * 32])))
            }
            return OperationalKeys(
                records: key(0), integrity: key(1), backup: key(2), signingSeed: key(3),
                masterKeyID: Array(raw[128..<144]))
        }
        guard file.generation == header.generation, constantTimeEqual(keys.masterKeyID, header.masterKeyID) else {
            throw VaultError(.sessionInvalid, "The vault was rekeyed after this session was unlocked.")
        }
        if file.idleTimeout > 0 {
            // Slide the expiry: a fresh nonce over the same keys, with the new deadlines bound in
            // the associated data. A failed write leaves the old deadline, which is still valid.
            let clear = clearFields(
                vaultID: file.vaultID, generation: file.generation, idle: TimeInterval(file.idleTimeout), end: file.end,
                bootEnd: file.bootEnd, clock: clock)
            try? write(plain, clear: clear, token: token, directory: directory)
        }
        return keys
    }

    /// What a session token amounts to for `vaultID`, without opening the vault: for `status`.
    public enum Status: Equatable {
        /// `endsAt` is the `--max-age` cap; `idleTimeout` is nil for a session that does not slide.
        case active(expiresAt: Date, endsAt: Date, idleTimeout: TimeInterval?)
        case expired
        case notFound
        case invalid
    }

    public static func status(token: SessionToken, directory: URL, vaultID: VaultID, now: Date = Date()) -> Status {
        guard
            let bytes = FileManager.default.contents(atPath: fileURL(id: token.id, directory: directory).path).map(
                Array.init)
        else {
            return .notFound
        }
        guard let file = SessionFile(bytes), file.vaultID == vaultID,
            (try? XChaCha20Poly1305.openSecret(
                file.sealed, key: token.secret,
                associatedData: associatedData(id: token.id, clear: file.clear))) != nil
        else { return .invalid }
        guard file.expiryReason(clock: .system(now: now)) == nil else { return .expired }
        return .active(
            expiresAt: Date(timeIntervalSince1970: Double(min(file.expiry, file.end))),
            endsAt: Date(timeIntervalSince1970: Double(file.end)),
            idleTimeout: file.idleTimeout > 0 ? TimeInterval(file.idleTimeout) : nil)
    }

    /// Removes the token's session file. Returns whether there was one.
    @discardableResult
    public static func remove(token: SessionToken, directory: URL) -> Bool {
        wipeAndRemove(fileURL(id: token.id, directory: directory))
    }

    /// Removes every session file for `vaultID` (readable without any secret). Returns how many.
    @discardableResult
    public static func removeAll(vaultID: VaultID, directory: URL) -> Int {
        sessionFiles(in: directory).filter { $0.vaultID == vaultID }.reduce(0) { $0 + (wipeAndRemove($1.url) ? 1 : 0) }
    }

    /// Wipes every session file in the directory, whichever vault it is for (`coffer lock --all`).
    @discardableResult
    public static func removeEverySession(directory: URL) -> Int {
        sessionFiles(in: directory).reduce(0) { $0 + (wipeAndRemove($1.url) ? 1 : 0) }
    }

    /// The session files left in the directory, with the vault each names (nil if unreadable).
    public static func remainingSessions(directory: URL) -> [(url: URL, vaultID: VaultID?)] {
        sessionFiles(in: directory)
    }

    /// Wipes every session file that has expired by either clock, that a restart ended, that an
    /// older Coffer wrote (it holds a master key), or that is not a session file at all.
    /// Called whenever sessions are used, so expired keys do not linger on disk.
    public static func removeExpired(directory: URL, now: Date = Date()) {
        removeExpired(directory: directory, clock: .system(now: now))
    }

    static func removeExpired(directory: URL, clock: SessionClock) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        where name.hasSuffix("." + fileExtension) {
            let url = directory.appendingPathComponent(name)
            guard let bytes = FileManager.default.contents(atPath: url.path).map(Array.init) else { continue }
            if let file = SessionFile(bytes) {
                if file.expiryReason(clock: clock) != nil { wipeAndRemove(url) }
            } else {
                wipeAndRemove(url)
            }
        }
    }

    /// The session files and the held-keys markers (`HeldKeysMarker`) in the directory: locking
    /// ends both.
    private static func sessionFiles(in directory: URL) -> [(url: URL, vaultID: VaultID?)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let sessions = names.filter { $0.hasSuffix("." + fileExtension) }.sorted().map { name in
            let url = directory.appendingPathComponent(name)
            let bytes = FileManager.default.contents(atPath: url.path).map(Array.init) ?? []
            let vaultID =
                bytes.count >= 24 && [magic, fixedExpiryMagic, formerMagic].contains(Array(bytes[0..<8]))
                ? VaultID(unchecked: Array(bytes[8..<24])) : nil
            return (url, vaultID)
        }
        return sessions + HeldKeysMarker.markers(in: directory)
    }

    /// Overwrites the file with zeros before unlinking it, for file systems that do not reuse the
    /// blocks at once (on tmpfs this is belt and braces).
    @discardableResult
    static func wipeAndRemove(_ url: URL) -> Bool {
        let descriptor = Glibc.open(url.path, O_WRONLY | O_NOFOLLOW)
        if descriptor >= 0 {
            var info = stat()
            if fstat(descriptor, &info) == 0, info.st_size > 0 {
                try? DurableFile.writeAll([UInt8](repeating: 0, count: Int(info.st_size)), to: descriptor)
                fsync(descriptor)
            }
            close(descriptor)
        }
        return unlink(url.path) == 0
    }
}

/// Creates `directory` 0700 if missing and refuses one that is not a real directory, belongs
/// to another user, or that others can read or write.
func ensurePrivateDirectory(_ directory: URL, what: String) throws {
    do {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
    } catch {
        throw VaultError(.storageFailure, "Cannot create the \(what) \(directory.path).")
    }
    var info = stat()
    guard lstat(directory.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
        throw VaultError(.insecureDirectory, "The \(what) \(directory.path) is not a directory.")
    }
    guard info.st_uid == getuid(), info.st_mode & 0o077 == 0 else {
        throw VaultError(
            .insecureDirectory,
            "The \(what) \(directory.path) must belong to you and be private (mode 0700). Fix it or remove it.")
    }
}

/// A session file or high-water mark, owner-only, replaced atomically (`DurableFile.replace`).
func writePrivateFile(_ bytes: [UInt8], to url: URL) throws {
    do {
        try DurableFile.replace(url, with: bytes)
    } catch {
        throw VaultError(
            .storageFailure, "Cannot write \(url.path): \(String(cString: strerror(error.code.rawValue))).")
    }
}

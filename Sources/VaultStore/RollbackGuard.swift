import Foundation
import VaultCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The high-water mark kept outside the vault file (Specs/vault-format.md §7).
///
/// A whole vault file rolled back to an older copy is internally consistent: nothing inside it
/// can tell. So this machine remembers, per vault id, the newest header format and key
/// generation it has seen at each path, and per device (each copy of the vault, `DeviceID`)
/// the last commit counter and the digest of that exact state. A file older than the mark, or a different state
/// with the same counter (two copies that diverged), is refused until the user says the rollback
/// was deliberate.
public struct RollbackGuard: Sendable {
    public let directory: URL
    /// Accept the state found (a deliberate restore or copy) and lower the mark to it.
    public var acceptRollback: Bool

    public init(directory: URL, acceptRollback: Bool = false) {
        self.directory = directory
        self.acceptRollback = acceptRollback
    }

    /// `$XDG_STATE_HOME/coffer`, else `~/.local/state/coffer`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty {
            return URL(fileURLWithPath: state).appendingPathComponent("coffer")
        }
        let home =
            environment["HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".local/state/coffer")
    }

    /// One device's last state seen here.
    public struct DeviceMark: Codable, Equatable, Sendable {
        public var counter: UInt64
        /// Hex of BLAKE2b-256 of the sealed commit record: one exact state of the file.
        public var state: String
        public var path: String
        /// Unix seconds.
        public var seen: Int64
    }

    /// The header last seen at one path.
    public struct PathMark: Codable, Equatable, Sendable {
        public var format: UInt16
        public var generation: UInt32
        public var seen: Int64
    }

    struct Mark: Codable, Equatable {
        var vault: String
        /// Device id (hex) → its last state; format 1 files, which have no device id, use "format1".
        var devices: [String: DeviceMark]
        /// Vault path → the header last seen there. Per path, because a restored copy elsewhere
        /// legitimately holds an older key generation (and opens with the passphrase of its time).
        var paths: [String: PathMark]
    }

    static let format1DeviceKey = "format1"

    private var marksDirectory: URL { directory.appendingPathComponent("marks") }
    private func markURL(_ vaultID: VaultID) -> URL { marksDirectory.appendingPathComponent("\(vaultID.hex).json") }

    /// The vaults this machine last saw at `path`: how `coffer lock` finds the sessions of a vault
    /// that has since been moved or damaged.
    public func vaultIDs(lastSeenAt path: String) -> [VaultID] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: marksDirectory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().compactMap { name -> VaultID? in
            guard let data = FileManager.default.contents(atPath: marksDirectory.appendingPathComponent(name).path),
                let mark = try? JSONDecoder().decode(Mark.self, from: data),
                mark.paths[path] != nil || mark.devices.values.contains(where: { $0.path == path }),
                let bytes = [UInt8](hexString: mark.vault), bytes.count == VaultID.byteCount
            else { return nil }
            return VaultID(unchecked: bytes)
        }
    }

    /// The mark for `vaultID`, nil when none was kept. A mark that exists but does not parse
    /// (damaged, or edited to switch the check off) is refused like a rollback: Coffer cannot
    /// tell, and `--accept-rollback` starts a new mark from the file found.
    func mark(for vaultID: VaultID) throws -> Mark? {
        var status = stat()
        guard lstat(markURL(vaultID).path, &status) == 0 || errno != ENOENT else { return nil }
        guard status.st_mode & S_IFMT == S_IFREG,
            let data = FileManager.default.contents(atPath: markURL(vaultID).path),
            let mark = try? JSONDecoder().decode(Mark.self, from: data), mark.vault == vaultID.hex
        else {
            throw VaultError(
                .rolledBack,
                "This computer's high-water mark for this vault (\(markURL(vaultID).path)) is unreadable: damaged or edited, so whether the vault file was rolled back cannot be told."
            )
        }
        return mark
    }

    /// Before any key work: a header of an older format or key generation than seen here is an
    /// older header or file put back (it may let an old passphrase in).
    func checkHeader(vaultID: VaultID, path: String, format: UInt16, generation: UInt32) throws {
        guard !acceptRollback, let seen = try mark(for: vaultID)?.paths[path] else { return }
        if generation < seen.generation || format < seen.format {
            throw VaultError(
                .rolledBack,
                """
                This vault's header is older than the one this computer last saw here: it is \(Self.describe(format: format, generation: generation)), \
                but \(Self.describe(format: seen.format, generation: seen.generation)) was seen at \(path) on \(Self.time(seen.seen)). \
                An older copy of the vault, or of its header, was put back; it may open only with a passphrase or recovery key that was since revoked.
                """)
        }
    }

    /// After the commit record is authenticated: the state must not be older than this device's
    /// mark, nor a different state at the same counter.
    func checkState(vaultID: VaultID, device: DeviceID?, counter: UInt64, state: [UInt8], path: String) throws {
        guard !acceptRollback, let mark = try mark(for: vaultID), let seen = mark.devices[Self.key(device)] else {
            return
        }
        let stateHex = state.hexString
        let here = "commit #\(counter) (state \(stateHex.prefix(12)))"
        let there =
            "commit #\(seen.counter) (state \(seen.state.prefix(12))) seen here on \(Self.time(seen.seen)) at \(seen.path)"
        if counter < seen.counter {
            throw VaultError(
                .rolledBack,
                "This vault file is older than the one this computer last saw: it is at \(here), but \(there). An older copy of the file was put back (rolled back)."
            )
        }
        if counter == seen.counter, stateHex != seen.state {
            throw VaultError(
                .rolledBack,
                "This vault file is at \(here), a different state from \(there): two copies of the vault were changed separately (a fork)."
            )
        }
    }

    /// Raises the mark to the state just read or written (never lowers it, unless accepting).
    func record(
        vaultID: VaultID, format: UInt16, generation: UInt32, device: DeviceID?, counter: UInt64, state: [UInt8],
        path: String,
        now: Date = Date()
    ) {
        guard (try? ensurePrivateDirectory(marksDirectory, what: "state directory")) != nil else { return }
        withLock(vaultID) {
            let seconds = Int64(now.timeIntervalSince1970)
            let stored: Mark?
            do {
                stored = try self.mark(for: vaultID)
            } catch {
                // An unreadable mark stays as found (every open refuses it) until the user accepts.
                guard acceptRollback else { return }
                stored = nil
            }
            var mark = stored ?? Mark(vault: vaultID.hex, devices: [:], paths: [:])
            let pathMark = mark.paths[path]
            if pathMark.map({ ($0.format, $0.generation) != (format, generation) }) ?? true,
                acceptRollback || pathMark.map({ (format, generation) >= ($0.format, $0.generation) }) ?? true
            {
                mark.paths[path] = PathMark(format: format, generation: generation, seen: seconds)
            }
            let key = Self.key(device)
            let deviceMark = mark.devices[key]
            if deviceMark.map({ ($0.counter, $0.state, $0.path) != (counter, state.hexString, path) }) ?? true,
                acceptRollback || deviceMark.map({ $0.counter <= counter }) ?? true
            {
                mark.devices[key] = DeviceMark(counter: counter, state: state.hexString, path: path, seen: seconds)
            }
            // A read that found what was last seen writes nothing.
            guard mark != stored else { return }
            if let data = try? JSONEncoder().encode(mark) {
                try? writePrivateFile(Array(data), to: markURL(vaultID))
            }
        }
    }

    private func withLock(_ vaultID: VaultID, _ body: () -> Void) {
        let descriptor = Glibc.open(
            marksDirectory.appendingPathComponent("\(vaultID.hex).lock").path, O_RDWR | O_CREAT | O_NOFOLLOW, 0o600)
        defer { if descriptor >= 0 { close(descriptor) } }
        if descriptor >= 0 { flock(descriptor, LOCK_EX) }
        body()
    }

    static func key(_ device: DeviceID?) -> String { device?.hex ?? format1DeviceKey }

    static func describe(format: UInt16, generation: UInt32) -> String {
        format < 2 ? "format \(format)" : "format \(format), key generation \(generation)"
    }

    static func time(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}

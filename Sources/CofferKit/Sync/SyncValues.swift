import Foundation
import VaultCrypto

/// One copy of the vault taking part in a sync folder: 16 random bytes drawn when the device
/// enrols, independent of the vault file's own device id (a rekey or restore changes that one).
public struct SyncDeviceID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public static let byteCount = 16
    public static let zero = SyncDeviceID(high: 0, low: 0)
    /// The 16 bytes as two big-endian words: every write's stamp holds one, so a vault's worth of
    /// them is compared, hashed and copied with no array (and no reference count) behind each.
    private let high: UInt64
    private let low: UInt64

    private init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// `bytes`: 16 bytes (the callers take exactly 16 from the file or the vault).
    init(unchecked bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "a device id is 16 bytes")
        let (high, low) = bytes.withUnsafeBytes {
            ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
        self.init(high: UInt64(bigEndian: high), low: UInt64(bigEndian: low))
    }

    init?(hex: String) {
        guard let bytes = [UInt8](hexString: hex), bytes.count == Self.byteCount else { return nil }
        self.init(unchecked: bytes)
    }

    static func random() -> SyncDeviceID { SyncDeviceID(unchecked: SecureRandom.bytes(count: byteCount)) }

    public var bytes: [UInt8] { withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Array($0) } }
    public var hex: String { bytes.hexString }
    /// The first eight hex digits, as `device list` shows it.
    public var short: String { String(hex.prefix(8)) }
    public var description: String { hex }
    /// In byte order.
    public static func < (lhs: SyncDeviceID, rhs: SyncDeviceID) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }
}

/// When and where a value was written: a hybrid logical clock (milliseconds since 1970 in the
/// high 48 bits, a counter in the low 16) and the device. Ordered by clock, then device id, so
/// every device picks the same winner between two concurrent writes of a record.
public struct SyncStamp: Hashable, Comparable, Sendable {
    /// A value no device wrote through sync (before `sync init`): older than every stamp.
    public static let zero = SyncStamp(clock: 0, device: .zero)
    public let clock: UInt64
    public let device: SyncDeviceID

    public init(clock: UInt64, device: SyncDeviceID) {
        self.clock = clock
        self.device = device
    }

    public static func < (lhs: SyncStamp, rhs: SyncStamp) -> Bool {
        (lhs.clock, lhs.device) < (rhs.clock, rhs.device)
    }

    /// The wall-clock part.
    public var date: Date { Date(timeIntervalSince1970: TimeInterval(clock >> 16) / 1000) }

    static func clock(milliseconds: Int64) -> UInt64 { UInt64(max(0, milliseconds)) << 16 }
    static func clock(at date: Date) -> UInt64 { clock(milliseconds: Int64(date.timeIntervalSince1970 * 1000)) }
}

/// Kind 16: this device's place in a sync folder. Local: never published, never archived.
public struct SyncState: Hashable, Sendable {
    /// What this device knows of another (from its enrolment file and its change files).
    public struct KnownDevice: Hashable, Sendable {
        public var name: String
        /// Its Ed25519 public key (32 bytes), from its enrolment, certified by the vault's key.
        public var publicKey: [UInt8]
        /// The last of its change files applied here (0: none).
        public var applied: UInt64
        /// When it last published, by its own clock (seconds since 1970; 0: never).
        public var lastHeard: Int64
        public init(name: String, publicKey: [UInt8], applied: UInt64, lastHeard: Int64) {
            self.name = name
            self.publicKey = publicKey
            self.applied = applied
            self.lastHeard = lastHeard
        }
    }

    public var device: SyncDeviceID
    public var deviceName: String
    /// The seed of this device's Ed25519 key, which signs everything it publishes. Secret.
    var signingSeed: [UInt8]
    /// The folder `coffer sync` uses when none is named (device-specific: mount points differ).
    public var folder: String
    /// The last change file this device published (0: none yet).
    public var published: UInt64
    /// The hybrid logical clock: above every stamp written or seen here.
    public var clock: UInt64
    /// Every other device, by id.
    public var devices: [SyncDeviceID: KnownDevice]
    /// The vault file's commit counter and device id (`Vault.deviceID`) once the sync that
    /// wrote this state was done (0 and empty: unknown). While the file is still at that commit,
    /// nothing was written to it since, so a sync that also finds nothing new in the folder can
    /// say so without reading the vault. The device id tells this file from one rebuilt from it
    /// (a restore draws a new one), whose counter starts again.
    var syncedCommit: UInt64
    var syncedFile: [UInt8]

    init(
        device: SyncDeviceID, deviceName: String, signingSeed: [UInt8], folder: String, published: UInt64,
        clock: UInt64, devices: [SyncDeviceID: KnownDevice], syncedCommit: UInt64 = 0, syncedFile: [UInt8] = []
    ) {
        self.device = device
        self.deviceName = deviceName
        self.signingSeed = signingSeed
        self.folder = folder
        self.published = published
        self.clock = clock
        self.devices = devices
        self.syncedCommit = syncedCommit
        self.syncedFile = syncedFile
    }

    var signingKey: SigningKey {
        var seed = signingSeed
        defer { secureWipe(&seed) }
        return SigningKey(seed: try! SymmetricKey(SecureBytes(copying: seed)))
    }

    /// Next clock value, above both the last one and `wall`.
    mutating func tick(now: Date) -> UInt64 {
        clock = max(clock + 1, SyncStamp.clock(at: now))
        return clock
    }

    /// What this device has applied from each device: what a change file it publishes depends on.
    var appliedVector: [SyncDeviceID: UInt64] {
        var vector = devices.compactMapValues { $0.applied == 0 ? nil : $0.applied }
        vector[device] = published
        return vector
    }
}

extension SyncState: CustomStringConvertible, CustomReflectable {
    public var description: String { "SyncState(device: \(device.short), published: \(published))" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// Kind 18: a value that lost a concurrent edit, kept so nothing a device wrote is thrown away.
/// Local: each device keeps the losers it saw (the same ones everywhere, as changes are applied
/// in causal order).
public struct SyncConflict: Hashable, Sendable {
    public var record: UUID
    /// The losing value's payload; nil when the losing write was a delete.
    public var loser: [UInt8]?
    public var loserStamp: SyncStamp
    /// The winning value's payload; nil when the winner deleted the record.
    public var winner: [UInt8]?
    public var winnerStamp: SyncStamp
    /// When this device merged it (seconds since 1970).
    public var detected: Int64
    /// Restored with `sync conflicts restore` (kept, so the listing says so).
    public var restored: Bool

    public init(
        record: UUID, loser: [UInt8]?, loserStamp: SyncStamp, winner: [UInt8]?, winnerStamp: SyncStamp,
        detected: Int64, restored: Bool = false
    ) {
        self.record = record
        self.loser = loser
        self.loserStamp = loserStamp
        self.winner = winner
        self.winnerStamp = winnerStamp
        self.detected = detected
        self.restored = restored
    }
}

/// Kind 17: for every record this device has synced, the stamp of its value and a digest of
/// the payload (so a local write since is found by comparing digests), and a stamp for every
/// deleted one (so an older write arriving late cannot bring it back). Local. Kept as its
/// encoded bytes and parsed only by sync, so opening a large vault does not pay for it.
public struct SyncIndexData: Hashable, Sendable {
    public let bytes: [UInt8]
    public init(bytes: [UInt8]) { self.bytes = bytes }
}

import Foundation

/// Ids for new records (Specs/record-payloads.md, "Record ids"): RFC 9562 version 8 UUIDs made
/// of the millisecond they were issued, a counter within it, and 62 bits drawn once per process.
///
/// Why not random (version 4) ids: an archive must give every record its id back, and 122 random
/// bits a record cannot be stored in less than about 13 MB per million records, more than
/// everything else in a backup together. Ids issued in order by one process differ from the one
/// before by a count, so an archive stores them in a few bytes each (Specs/backup-format.md,
/// format 3's id table). They stay unique without any state kept between processes: one process
/// never issues the same (millisecond, counter) twice, even when the clock steps back, and two
/// processes share their 62 random bits with a chance of one in 2⁶², so they never meet.
///
/// Every id lives inside the vault's encryption (pages, sync files and archives); the time in it
/// is the time the record was made, which its contents already tell whoever can read them.
public enum RecordIDs {
    /// The next id: after every id this process issued before, in byte order.
    public static func next() -> UUID {
        issuer.withLock { $0.next() }
    }

    /// `count` next ids, taken under one lock (a large import makes a million).
    public static func next(count: Int) -> [UUID] {
        issuer.withLock { issuer in (0..<count).map { _ in issuer.next() } }
    }

    /// Whether `id` has this layout (version 8, RFC 9562 variant): made by Coffer since ordered
    /// ids, not random or imported with its own.
    public static func isOrdered(_ id: UUID) -> Bool {
        id.uuid.6 >> 4 == 8 && id.uuid.8 >> 6 == 0b10
    }

    private static let issuer = LockedIssuer(
        Issuer(random: UInt64.random(in: 0...UInt64.max) & (1 << 62 - 1), clock: currentMillisecond))

    static func currentMillisecond() -> UInt64 {
        UInt64(max(0, Date().timeIntervalSince1970 * 1000))
    }

    /// The state of one sequence of ids: the millisecond and counter last used, and this
    /// process's 62 random bits. Internal so tests can drive it with their own clock.
    struct Issuer {
        let random: UInt64
        let clock: () -> UInt64
        private var millisecond: UInt64 = 0
        private var counter: UInt64 = 0

        init(random: UInt64, clock: @escaping () -> UInt64) {
            self.random = random & (1 << 62 - 1)
            self.clock = clock
        }

        /// unix_ts_ms (48) ‖ version 8 (4) ‖ counter (12) ‖ variant 0b10 (2) ‖ random (62).
        /// A clock that stands still or steps back keeps the last millisecond and counts on; a
        /// counter past 4,095 moves on to the next millisecond (ahead of the clock for a while,
        /// as RFC 9562 allows), so ids only ever grow.
        mutating func next() -> UUID {
            let now = clock() & (1 << 48 - 1)
            if now > millisecond {
                millisecond = now
                counter = 0
            } else if counter < 0xFFF {
                counter += 1
            } else {
                millisecond += 1
                counter = 0
            }
            let high = millisecond << 16 | 0x8 << 12 | counter
            let low = 0b10 << 62 | random
            return withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { UUID(uuid: $0.load(as: uuid_t.self)) }
        }
    }

    /// The process's issuer behind a lock: ids are made on any thread.
    private final class LockedIssuer: @unchecked Sendable {
        private var issuer: Issuer
        private let lock = NSLock()

        init(_ issuer: Issuer) { self.issuer = issuer }

        func withLock<Result>(_ body: (inout Issuer) -> Result) -> Result {
            lock.lock()
            defer { lock.unlock() }
            return body(&issuer)
        }
    }
}

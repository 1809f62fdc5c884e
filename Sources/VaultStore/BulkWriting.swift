import Dispatch
import Foundation
import GRDB
import VaultCrypto

/// Takes a stream of new records and seals them into fresh pages as each page fills, so a bulk
/// load holds one page per group in memory, not the records (`Vault.writeInBulk`).
public final class BulkRecordWriter {
    private let db: Database
    private let keys: OperationalKeys
    private let vaultID: VaultID
    /// Open pages (the records not yet sealed), and where each group's is.
    private var open: [OpenPage] = []
    private var openIndex: [PageGroup: Int] = [:]
    /// Sealed pages by group, in number order.
    private(set) var sealed: [PageGroup: [PageEntry]] = [:]
    /// The number each group's next page takes: far above the group's pages before the load, so
    /// the small changes written with it can add pages of their own below.
    private var nextNumber: [PageGroup: UInt32] = [:]
    private let firstNumber: (PageGroup) -> UInt32?
    private(set) var ids: [RecordID] = []

    private struct OpenPage {
        let group: PageGroup
        var plain: [UInt8] = [0, 0, 0, 0]
        var ids: [RecordID] = []

        init(_ group: PageGroup) {
            self.group = group
            plain.reserveCapacity(PageLayout.fillLimit)
        }
    }

    /// Room left between a group's last page before the load and its first loaded page.
    static let numberGap: UInt32 = 1 << 20

    /// `firstNumber` gives each group's first page number (nil: the group is full).
    init(db: Database, keys: OperationalKeys, vaultID: VaultID, firstNumber: @escaping (PageGroup) -> UInt32?) {
        self.db = db
        self.keys = keys
        self.vaultID = vaultID
        self.firstNumber = firstNumber
    }

    /// A writer whose pages go after every page `layout` holds, `numberGap` above each
    /// group's last.
    fileprivate convenience init(db: Database, keys: OperationalKeys, vaultID: VaultID, layout: PagedLayout) {
        let indexes = layout.indexes
        self.init(db: db, keys: keys, vaultID: vaultID) { group in
            let last = indexes[group]?.pages.last?.number ?? 0
            let (first, overflow) = last.addingReportingOverflow(Self.numberGap)
            return overflow ? nil : first
        }
    }

    /// Adds a record that is not in the vault yet (version 1) to `group`'s open page, sealing
    /// the page first when the record would not fit.
    public func append(_ id: RecordID, group: PageGroup, payload: UnsafeRawBufferPointer) throws {
        let at: Int
        if let known = openIndex[group] {
            at = known
        } else {
            at = open.count
            open.append(OpenPage(group))
            openIndex[group] = at
        }
        if open[at].plain.count + PageLayout.entryOverhead + payload.count > PageLayout.fillLimit,
            !open[at].ids.isEmpty
        {
            try seal(at)
        }
        ids.append(id)
        open[at].ids.append(id)
        withUnsafeBytes(of: (id.high.bigEndian, id.low.bigEndian, UInt32(payload.count).littleEndian)) {
            open[at].plain.append(contentsOf: $0.prefix(PageLayout.entryOverhead))
        }
        open[at].plain.append(contentsOf: payload)
    }

    /// Seals the open page at `at` and leaves an empty one in its place.
    private func seal(_ at: Int) throws {
        let group = open[at].group
        var page = open[at]
        open[at] = OpenPage(group)
        defer { secureWipe(&page.plain) }
        guard let number = nextNumber[group] ?? firstNumber(group) else {
            throw VaultError(.storageFailure, "A page group is full; nothing was changed.")
        }
        nextNumber[group] = number &+ 1
        var count = UInt32(page.ids.count).littleEndian
        withUnsafeBytes(of: &count) { page.plain.replaceSubrange(0..<4, with: $0) }
        let locator = PageLayout.locator(.page, group: group, number: number, key: keys.locator)
        let (sealedPage, tag) = PageCodec.seal(page.plain, key: keys.records, locator: locator, vaultID: vaultID)
        try db.execute(sql: "INSERT INTO page (locator, sealed) VALUES (?, ?)", arguments: [locator, sealedPage])
        try Vault.expectOneChange(db, "a page")
        sealed[group, default: []].append(
            PageEntry(
                number: number, tag: tag, ids: page.ids, versions: [UInt64](repeating: 1, count: page.ids.count)))
    }

    /// Seals every page still open. Records appended afterwards start new pages: a writer may
    /// seal what it has while it waits for the last of its records.
    package func sealAll() throws {
        for at in open.indices where !open[at].ids.isEmpty { try seal(at) }
    }
}

extension Vault {
    /// Loads many new records and a few ordinary changes in one transaction: `body` streams the
    /// new records into `writer` (each sealed into a page as soon as the page fills) and returns
    /// the changes, which may depend on what it streamed. Every new record must have an id the
    /// vault does not hold and that `body` gives once; otherwise nothing is written.
    ///
    /// Afterwards this `Vault` holds the records of the groups the load did not reach, as if
    /// opened for them (`open(reading:)`): the load's records are on disk, not in memory.
    public func writeInBulk(_ body: (BulkRecordWriter) throws -> [RecordChange]) throws {
        try requireWhole()
        if state.paged == nil { try upgrade() }
        let keys = self.keys.operational
        let vaultID = id
        var updated = state
        try inImmediateTransaction { db in
            // Pages go in at random places in the page table (their locators are keyed hashes):
            // SQLite's default cache of 2 MiB would write and read back the table's leaves over
            // and over. A larger one for the load keeps them in memory.
            let cacheSize = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
            try db.execute(sql: "PRAGMA cache_size = \(Self.bulkCacheSize)")
            defer { try? db.execute(sql: "PRAGMA cache_size = \(cacheSize)") }
            updated = try self.currentState(db)
            guard var layout = updated.paged else { throw Self.replacedMeanwhile }
            let writer = BulkRecordWriter(db: db, keys: keys, vaultID: vaultID, layout: layout)
            let changes = try body(writer)
            try writer.sealAll()
            let loaded = writer.ids
            let highs = Self.sortedHighs(of: loaded)
            if let duplicate = Self.repeated(in: loaded, sortedHighs: highs).first
                ?? loaded.first(where: { updated.records.index(of: $0) != nil })
            {
                throw VaultError(
                    .duplicateRecord,
                    "Record \(duplicate.hex) is given twice, or is already in the vault; nothing was changed.")
            }
            // The ordinary changes, as `apply` makes them, then the loaded pages after them.
            for change in changes where Self.contains(highs, change.id.high) && loaded.contains(change.id) {
                throw VaultError(.duplicateRecord, "Record \(change.id.hex) is given twice; nothing was changed.")
            }
            let final = try Self.finalStates(of: changes, over: updated.records)
            let added = final.count { $0.written != nil && updated.records.index(of: $0.id) == nil }
            let removed = final.count { $0.written == nil }
            try Self.writeChangedPages(
                db, layout: &layout, final: final, store: updated.records, grouping: self.grouping, keys: keys,
                vaultID: vaultID)
            let records = updated.records.merging(final)
            // The loaded groups join the layout; their records stay on disk only, so this vault
            // no longer holds those groups, as if it had been opened without them.
            var unread = Set<RecordID>()
            var indexes: [GroupIndex] = []
            for (group, pages) in writer.sealed {
                var index = layout.indexes[group] ?? GroupIndex(group: group, pages: [])
                for page in index.pages { unread.formUnion(page.ids) }
                index.pages += pages
                indexes.append(index)
            }
            for index in GroupIndex.sealAll(indexes, keys: keys, vaultID: vaultID) {
                try db.execute(
                    sql:
                        "INSERT INTO page_index (locator, sealed) VALUES (?, ?) ON CONFLICT (locator) DO UPDATE SET sealed = excluded.sealed",
                    arguments: [index.locator, index.sealed])
                try Self.expectOneChange(db, "a page index")
                layout.commit.indexDigests[index.group] = index.digest
                layout.indexes[index.group] = nil
            }
            layout.commit.recordCount = UInt64(updated.records.count + added - removed + loaded.count)
            updated.records = unread.isEmpty ? records : records.filter { !unread.contains($0) }
            updated.partial = true
            updated.paged = layout
            try self.writeCommit(db, state: &updated, keys: keys, headerBytes: self.headerBytes)
        }
        state = updated
        recordMark()
    }

    /// SQLite's page cache during a bulk load, in KiB (negative, as the pragma takes it).
    static let bulkCacheSize = -65_536

    /// The ids' high halves, sorted: in two halves on two cores, then merged. Ids that share a
    /// high half are rare (random ids: almost never; ordered ids: two processes in the same
    /// millisecond with the same counter), and the few that do are compared whole (`repeated`);
    /// a million sort in a third of the time the whole ids take, and in a quarter of the memory
    /// a set of them needs.
    static func sortedHighs(of ids: some Sequence<RecordID>) -> [UInt64] {
        var halves = ids.map(\.high)
        let middle = halves.count / 2
        halves.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let buffer = buffer
            DispatchQueue.concurrentPerform(iterations: 2) { half in
                var part = UnsafeMutableBufferPointer(rebasing: half == 0 ? buffer[..<middle] : buffer[middle...])
                part.sort()
            }
        }
        var merged: [UInt64] = []
        merged.reserveCapacity(halves.count)
        var left = 0, right = middle
        while left < middle, right < halves.count {
            if halves[left] <= halves[right] {
                merged.append(halves[left])
                left += 1
            } else {
                merged.append(halves[right])
                right += 1
            }
        }
        merged += halves[left..<middle]
        merged += halves[right...]
        return merged
    }

    /// Every id `ids` holds more than once (each time it is met again), given their sorted high
    /// halves; `ids` is walked again only when two high halves are equal.
    static func repeated(in ids: some Sequence<RecordID>, sortedHighs highs: [UInt64]) -> [RecordID] {
        var shared = Set<UInt64>()
        for (high, next) in zip(highs, highs.dropFirst()) where high == next { shared.insert(high) }
        guard !shared.isEmpty else { return [] }
        var seen = Set<RecordID>()
        return ids.filter { shared.contains($0.high) && !seen.insert($0).inserted }
    }

    /// Whether sorted `values` holds `value`.
    private static func contains(_ values: [UInt64], _ value: UInt64) -> Bool {
        var low = 0, high = values.count
        while low < high {
            let middle = (low + high) / 2
            if values[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low < values.count && values[low] == value
    }
}

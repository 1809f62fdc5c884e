import Foundation
import GRDB
internal import GRDBSQLite
import VaultCrypto

/// Format 3 in memory: the commit record and every group's index. The records themselves are in
/// `VaultState.records`, in page order.
struct PagedLayout {
    var commit: PagedCommit
    var indexes: [PageGroup: GroupIndex]

    /// Where each record is (each of `only`, when given: a small write looks up its own records
    /// without a table of every one).
    func places(of only: Set<RecordID>? = nil) -> [RecordID: PagePlace] {
        var places: [RecordID: PagePlace] = [:]
        places.reserveCapacity(only?.count ?? Int(commit.recordCount))
        for (group, index) in indexes {
            for page in index.pages {
                for id in page.ids where only?.contains(id) ?? true {
                    places[id] = PagePlace(group: group, number: page.number)
                }
            }
        }
        return places
    }
}

/// A record to be written into a page: its id, version and payload.
struct PageRecord {
    let id: RecordID
    let version: UInt64
    let payload: Data
}

extension Vault {
    // MARK: Reading pages

    /// What checking one page index row found.
    private enum IndexOutcome {
        /// The commit record lists no index at this locator.
        case unlisted
        /// Not the index the commit record's digest names.
        case altered(PageGroup)
        /// The digest holds but the index does not open or parse.
        case damaged(PageGroup)
        case opened(GroupIndex)
    }

    /// How many sealed index bytes are gathered before they are opened together.
    static let indexBatchBytes = 4 << 20

    /// Reads the commit record, every group's index and every page (of the groups `reading`
    /// selects, when given), and checks each against the others. Every problem is collected, and a
    /// page that cannot be read still has its records named, from its index. A partial read looks
    /// up its rows by locator and cannot see rows nobody lists: that is the whole read's work.
    ///
    /// With `sink`, every record goes to it (its payload valid only during the call) instead of
    /// into the state, whose records are then empty: a whole read in the memory of three batches.
    /// The sink is called on another thread, one record after another in order, and never after
    /// this returns or throws.
    static func loadPagedState(
        db: Database, header: VaultHeader, headerBytes: [UInt8], keys: OperationalKeys,
        reading: ((PageGroup) -> Bool)? = nil, sink: ((RecordID, UnsafeRawBufferPointer) -> Void)? = nil
    ) throws -> VaultState {
        let vaultID = header.vaultID
        let locatorKey = keys.locator
        guard let commitSealed = try Data.fetchOne(db, sql: "SELECT sealed FROM commit_record WHERE id = 1") else {
            throw failure([
                IntegrityProblem(kind: .structureDamaged, recordID: nil, detail: "the commit record is missing")
            ])
        }
        guard let commit = PagedCommit.open(commitSealed, key: keys.integrity, vaultID: vaultID) else {
            throw failure([
                IntegrityProblem(
                    kind: .structureDamaged, recordID: nil,
                    detail:
                        "the commit record does not authenticate under this header's keys (altered, from another vault, or the header is older or newer than the data)"
                )
            ])
        }
        guard constantTimeEqual(commit.headerDigest, BLAKE2b.hash(headerBytes)) else {
            throw VaultError(
                .headerTampered,
                "The vault header is not the one its commit record names: an older or edited header was put back.")
        }

        var problems: [IntegrityProblem] = []
        let groups = commit.indexDigests.keys.sorted()
        func name(_ group: PageGroup) -> String { "page group \(groups.firstIndex(of: group).map { $0 + 1 } ?? 0)" }
        let expectedIndexes = Dictionary(
            uniqueKeysWithValues: groups.map { (PageLayout.locator(.index, group: $0, key: locatorKey), $0) })
        var indexes: [PageGroup: GroupIndex] = [:]
        var seenIndexes = Set<PageGroup>()
        let selected = reading.map { groups.filter($0) } ?? groups
        // Indexes are checked and opened a few rows at a time, on all cores: a million records'
        // indexes are tens of MB sealed, to hash, decrypt and parse, and holding every sealed row
        // beside its opened index would double that.
        var pending: [(locator: Data, sealed: Data)] = []
        var pendingBytes = 0
        func openPending() {
            var opened = [IndexOutcome](repeating: .unlisted, count: pending.count)
            let rows = pending
            opened.withUnsafeMutableBufferPointer { output in
                nonisolated(unsafe) let output = output  // each iteration writes only its own index
                DispatchQueue.concurrentPerform(iterations: rows.count) { position in
                    let (locator, sealed) = rows[position]
                    guard let group = expectedIndexes[locator] else { return }
                    guard constantTimeEqual(BLAKE2b.hash(sealed), commit.indexDigests[group]!) else {
                        output[position] = .altered(group)
                        return
                    }
                    output[position] =
                        GroupIndex.open(sealed, group: group, key: keys.integrity, locator: locator, vaultID: vaultID)
                        .map(IndexOutcome.opened) ?? .damaged(group)
                }
            }
            for outcome in opened {
                switch outcome {
                case .unlisted:
                    problems.append(
                        IntegrityProblem(
                            kind: .structureDamaged, recordID: nil,
                            detail:
                                "a page index the commit record does not list is in the file (planted, or left from another state)"
                        ))
                case .altered(let group):
                    seenIndexes.insert(group)
                    problems.append(
                        IntegrityProblem(
                            kind: .structureDamaged, recordID: nil,
                            detail:
                                "the index of \(name(group)) does not match the commit record (altered or rolled back)")
                    )
                case .damaged(let group):
                    seenIndexes.insert(group)
                    problems.append(
                        IntegrityProblem(
                            kind: .structureDamaged, recordID: nil, detail: "the index of \(name(group)) is damaged"))
                case .opened(let index):
                    seenIndexes.insert(index.group)
                    indexes[index.group] = index
                }
            }
            pending.removeAll(keepingCapacity: true)
            pendingBytes = 0
        }
        func consider(_ locator: Data, _ sealed: Data) {
            pending.append((locator, sealed))
            pendingBytes += sealed.count
            if pendingBytes >= Self.indexBatchBytes { openPending() }
        }
        if reading == nil {
            // Only bytes are rows: SQLite would keep a text copy of a blob key as another key.
            let rows = try Row.fetchCursor(db, sql: "SELECT locator, sealed FROM page_index WHERE \(Self.bothBlobs)")
            while let row = try rows.next() { consider(row[0], row[1]) }
            openPending()
            if try Int.fetchOne(db, sql: "SELECT count(*) FROM page_index WHERE NOT (\(Self.bothBlobs))")! > 0 {
                problems.append(
                    IntegrityProblem(
                        kind: .structureDamaged, recordID: nil,
                        detail: "page index rows that are not stored as bytes are in the file (planted)"))
            }
        } else {
            for group in selected {
                let locator = PageLayout.locator(.index, group: group, key: locatorKey)
                if let sealed = try Data.fetchOne(
                    db, sql: "SELECT sealed FROM page_index WHERE locator = ? AND \(Self.bothBlobs)",
                    arguments: [locator])
                {
                    consider(locator, sealed)
                }
            }
            openPending()
        }
        for group in selected where !seenIndexes.contains(group) {
            problems.append(
                IntegrityProblem(
                    kind: .structureDamaged, recordID: nil, detail: "the index of \(name(group)) is missing"))
        }
        let listed = indexes.values.reduce(0) { $0 + $1.recordCount }
        if problems.isEmpty, reading == nil, UInt64(listed) != commit.recordCount {
            problems.append(
                IntegrityProblem(
                    kind: .structureDamaged, recordID: nil,
                    detail: "the page indexes list \(listed) records but the commit record counts \(commit.recordCount)"
                ))
        }

        // Every page the indexes list, by its locator.
        struct Expected {
            let group: PageGroup
            let page: Int
        }
        var expectedPages: [Data: Expected] = [:]
        for (group, index) in indexes {
            for (position, page) in index.pages.enumerated() {
                expectedPages[PageLayout.locator(.page, group: group, number: page.number, key: locatorKey)] =
                    Expected(group: group, page: position)
            }
        }
        let listedIDs = indexes.values.lazy.flatMap { $0.pages.lazy.flatMap(\.ids) }
        for id in repeated(in: listedIDs, sortedHighs: sortedHighs(of: listedIDs)) {
            problems.append(
                IntegrityProblem(
                    kind: .recordDuplicated, recordID: id, detail: "is listed in more than one page (duplicated)"))
        }
        let allIndexesRead = indexes.count == groups.count

        // Pages are read in batches, in three stages side by side: this thread reads a batch's
        // rows, other threads open the batch before it (on all cores), and one more hands the
        // records of the batch before that over, batch after batch in order. Handing over is
        // one thread's work, as long as opening: in turn, the other core was idle half the
        // time. At most two batches are opened or being opened beside the one being read, and
        // what they found is read here only once the last is handed over.
        final class Opened: @unchecked Sendable {
            var records: RecordStore
            var read = 0
            var problems: [IntegrityProblem] = []
            init(capacity: Int) { records = RecordStore(reservingCapacity: capacity) }
        }
        let opened = Opened(capacity: sink == nil ? listed : 0)
        var found = Set<Data>()
        var batch: [(locator: Data, sealed: Data, expected: Expected)] = []
        let batchDone = DispatchGroup()
        let inFlight = DispatchSemaphore(value: 2)
        let handingOver = DispatchQueue(label: "coffer.vault.pages")
        let pageIndexes = indexes
        // The batches reach the caller's sink through a box this call holds, never retaining
        // it themselves: the sink may be a closure that must not outlive the call
        // (`withoutActuallyEscaping`), and a finished batch's block is let go a moment after
        // the group hears it is done. Called by one batch's thread at a time, in order.
        final class SinkBox: @unchecked Sendable {
            let sink: ((RecordID, UnsafeRawBufferPointer) -> Void)?
            init(_ sink: ((RecordID, UnsafeRawBufferPointer) -> Void)?) { self.sink = sink }
        }
        let sinkBox = SinkBox(sink)
        // Whatever ends this read (a row that cannot be read throws), no batch outlives it.
        defer {
            batchDone.wait()
            withExtendedLifetime(sinkBox) {}
        }
        unowned(unsafe) let sinks = sinkBox
        let pageKey = keys.records
        let groupNames = groups
        /// A batch's opened pages, from the threads that open it to the one that hands it over.
        final class Plaintexts: @unchecked Sendable {
            var pages: [[UInt8]?] = []
            let ready = DispatchSemaphore(value: 0)
        }
        // Each batch's plaintext is wiped.
        let deliver = { @Sendable (batch: [(locator: Data, sealed: Data, expected: Expected)], opening: Plaintexts) in
            func name(_ group: PageGroup) -> String {
                "page group \(groupNames.firstIndex(of: group).map { $0 + 1 } ?? 0)"
            }
            // Taken once a batch, not once a record: each time it is taken its context is
            // retained and released, a million times for a million records.
            let sink = sinks.sink
            opening.ready.wait()
            var plaintexts: [[UInt8]?] = []
            swap(&plaintexts, &opening.pages)
            for (position, item) in batch.enumerated() {
                let page = pageIndexes[item.expected.group]!.pages[item.expected.page]
                let where_ = "page \(page.number) of \(name(item.expected.group))"
                let tagMatches = item.sealed.withUnsafeBytes { RecordCipher.tag(of: $0) }.constantTimeEquals(page.tag)
                // Taken out of the batch's results, so that the wipe below reaches the plaintext
                // itself, not a copy.
                guard var plain = plaintexts[position].take() else {
                    for id in page.ids {
                        opened.problems.append(
                            IntegrityProblem(
                                kind: .recordDamaged, recordID: id,
                                detail:
                                    "is in \(where_), which does not authenticate (its bytes were altered, or swapped with another page's)"
                            ))
                    }
                    continue
                }
                defer { secureWipe(&plain) }
                guard tagMatches else {
                    for id in page.ids {
                        opened.problems.append(
                            IntegrityProblem(
                                kind: .recordStale, recordID: id,
                                detail:
                                    "is in \(where_), which is authentic but not the copy its index lists (an older or newer copy put back)"
                            ))
                    }
                    continue
                }
                let entries = plain.withUnsafeBytes { PageCodec.entries(of: $0) }
                guard let entries, entries.map(\.id) == page.ids else {
                    for id in page.ids {
                        opened.problems.append(
                            IntegrityProblem(
                                kind: .recordDamaged, recordID: id,
                                detail: "is in \(where_), whose records are not the ones its index lists"))
                    }
                    continue
                }
                plain.withUnsafeBytes { bytes in
                    if let sink {
                        for entry in entries { sink(entry.id, UnsafeRawBufferPointer(rebasing: bytes[entry.payload])) }
                    } else {
                        for (entry, version) in zip(entries, page.versions) {
                            opened.records.append(
                                id: entry.id, version: version,
                                payload: UnsafeRawBufferPointer(rebasing: bytes[entry.payload]))
                        }
                    }
                }
                opened.read += entries.count
            }
        }
        func handOver() {
            guard !batch.isEmpty else { return }
            let taken = batch
            batch.removeAll(keepingCapacity: true)
            inFlight.wait()
            let opening = Plaintexts()
            batchDone.enter()
            DispatchQueue.global().async {
                opening.pages = PageCodec.openAll(taken.map { ($0.locator, $0.sealed) }, key: pageKey, vaultID: vaultID)
                opening.ready.signal()
            }
            // Queued now, in the order the batches were read, whichever is opened first.
            handingOver.async {
                deliver(taken, opening)
                inFlight.signal()
                batchDone.leave()
            }
        }
        var unlisted = 0
        if reading == nil {
            unlisted = try Int.fetchOne(db, sql: "SELECT count(*) FROM page WHERE NOT (\(Self.bothBlobs))")!
            let pageRows = try Row.fetchCursor(db, sql: "SELECT locator, sealed FROM page WHERE \(Self.bothBlobs)")
            while let row = try pageRows.next() {
                let locator: Data = row[0]
                guard let expected = expectedPages[locator] else {
                    unlisted += 1
                    continue
                }
                found.insert(locator)
                batch.append((locator, row[1], expected))
                if batch.count == 256 { handOver() }
            }
        } else {
            let statement = try db.makeStatement(sql: "SELECT sealed FROM page WHERE locator = ? AND \(Self.bothBlobs)")
            for (locator, expected) in expectedPages {
                guard let sealed = try Data.fetchOne(statement, arguments: [locator]) else { continue }
                found.insert(locator)
                batch.append((locator, sealed, expected))
                if batch.count == 256 { handOver() }
            }
        }
        handOver()
        batchDone.wait()
        problems += opened.problems
        let recordsRead = opened.read
        if unlisted > 0, allIndexesRead {
            problems.append(
                IntegrityProblem(
                    kind: .recordUnexpected, recordID: nil,
                    detail:
                        "\(unlisted) page\(unlisted == 1 ? " that no index lists is" : "s that no index lists are") in the file (injected, a deleted page put back, or from another vault)"
                ))
        }
        for (locator, expected) in expectedPages where !found.contains(locator) {
            let page = indexes[expected.group]!.pages[expected.page]
            for id in page.ids {
                problems.append(
                    IntegrityProblem(
                        kind: .recordMissing, recordID: id,
                        detail:
                            "is in page \(page.number) of \(name(expected.group)), which is missing from the file (deleted)"
                    ))
            }
        }
        if problems.isEmpty, reading == nil, UInt64(recordsRead) != commit.recordCount {
            problems.append(
                IntegrityProblem(
                    kind: .structureDamaged, recordID: nil,
                    detail: "the pages hold \(recordsRead) records but the commit record counts \(commit.recordCount)"
                ))
        }
        guard problems.isEmpty else { throw failure(problems) }
        return VaultState(
            partial: reading != nil, counter: commit.counter, deviceID: commit.deviceID, commitSealed: commitSealed,
            records: sink == nil ? opened.records.sortedByID() : opened.records,
            paged: PagedLayout(commit: commit, indexes: indexes))
    }

    /// A row Coffer wrote: both columns bytes. With the primary key, no locator can then be met
    /// twice (the records read are also counted against the commit record).
    static let bothBlobs = "typeof(locator) = 'blob' AND typeof(sealed) = 'blob'"

    // MARK: Writing pages

    /// Writes `records` (every record of the vault) as pages and indexes into empty page tables,
    /// grouped by `grouping`, and returns the layout with a commit record (not yet written) at
    /// `counter`.
    static func writeAllPages(
        _ db: Database, records: [PageRecord], grouping: PageGrouping, keys: OperationalKeys, vaultID: VaultID,
        headerBytes: [UInt8], counter: UInt64, deviceID: DeviceID, progress: WorkProgress.Stage = .encrypting
    ) throws -> PagedLayout {
        var byGroup: [PageGroup: [Int]] = [:]
        for (position, record) in records.enumerated() {
            let group = record.payload.withUnsafeBytes { grouping(record.id, $0) }
            byGroup[group, default: []].append(position)
        }
        var indexes: [PageGroup: GroupIndex] = [:]
        var written = 0
        for group in byGroup.keys.sorted() {
            var index = GroupIndex(group: group, pages: [])
            var current: [Int] = []
            var size = PageLayout.pageHeader
            func flush() throws {
                guard !current.isEmpty else { return }
                let number = UInt32(index.pages.count)
                let plain = PageCodec.encode(current.map { records[$0] })
                let locator = PageLayout.locator(.page, group: group, number: number, key: keys.locator)
                let (sealed, tag) = PageCodec.seal(plain, key: keys.records, locator: locator, vaultID: vaultID)
                try insert(db, table: "page", locator: locator, sealed: sealed)
                index.pages.append(
                    PageEntry(
                        number: number, tag: tag, ids: current.map { records[$0].id },
                        versions: current.map { records[$0].version }))
                written += current.count
                WorkProgress.report(progress, written, of: records.count)
                current.removeAll()
                size = PageLayout.pageHeader
            }
            for position in byGroup[group]! {
                let entry = PageLayout.entryOverhead + records[position].payload.count
                if size + entry > PageLayout.fillLimit { try flush() }
                current.append(position)
                size += entry
            }
            try flush()
            indexes[group] = index
        }
        var commit = PagedCommit(
            counter: counter, recordCount: UInt64(records.count), headerDigest: BLAKE2b.hash(headerBytes),
            deviceID: deviceID, indexDigests: [:])
        for index in GroupIndex.sealAll(Array(indexes.values), keys: keys, vaultID: vaultID) {
            try insert(db, table: "page_index", locator: index.locator, sealed: index.sealed)
            commit.indexDigests[index.group] = index.digest
        }
        return PagedLayout(commit: commit, indexes: indexes)
    }

    private static func insert(_ db: Database, table: String, locator: Data, sealed: Data) throws {
        try db.execute(sql: "INSERT INTO \(table) (locator, sealed) VALUES (?, ?)", arguments: [locator, sealed])
        try expectOneChange(db, "a page")
    }

    /// Applies `final` (one entry per id: the record as written, or nil for a delete) to the
    /// pages: every page a record leaves or joins is re-sealed, every group whose pages changed
    /// gets a new index, and the layout's commit names them. `store` is the records before the
    /// change.
    static func writeChangedPages(
        _ db: Database, layout: inout PagedLayout, final: [(id: RecordID, written: PageRecord?)],
        store: RecordStore, grouping: PageGrouping?, keys: OperationalKeys, vaultID: VaultID
    ) throws {
        let places = layout.places(of: Set(final.map(\.id)))
        var changedPayloads: [RecordID: Data] = [:]
        for (id, written) in final { if let written { changedPayloads[id] = written.payload } }
        var dirtyPages = Set<PagePlace>()
        var dirtyGroups = Set<PageGroup>()
        func pagePosition(_ place: PagePlace) -> Int? {
            layout.indexes[place.group]?.pages.firstIndex { $0.number == place.number }
        }
        func payloadSize(_ id: RecordID) -> Int {
            if let payload = changedPayloads[id] { return payload.count }
            return store.range(at: store.index(of: id)!).count
        }
        // Each touched page's plaintext size, counted once and then kept up to date.
        var sizes: [PagePlace: Int] = [:]
        func size(of place: PagePlace, _ page: PageEntry) -> Int {
            if let known = sizes[place] { return known }
            let counted = page.ids.reduce(PageLayout.pageHeader) { $0 + PageLayout.entryOverhead + payloadSize($1) }
            sizes[place] = counted
            return counted
        }
        // Take every changed record out of its page, then put each written one where it fits.
        for (id, _) in final {
            guard let place = places[id], let position = pagePosition(place) else { continue }
            let current = size(of: place, layout.indexes[place.group]!.pages[position])
            sizes[place] = current - PageLayout.entryOverhead - store.range(at: store.index(of: id)!).count
            let at = layout.indexes[place.group]!.pages[position].ids.firstIndex(of: id)!
            layout.indexes[place.group]!.pages[position].ids.remove(at: at)
            layout.indexes[place.group]!.pages[position].versions.remove(at: at)
            dirtyPages.insert(place)
            dirtyGroups.insert(place.group)
        }
        for (id, written) in final {
            guard let written else { continue }
            let group =
                grouping.map { grouping in written.payload.withUnsafeBytes { grouping(id, $0) } } ?? places[id]?.group
                ?? .unsorted
            let entrySize = PageLayout.entryOverhead + written.payload.count
            if layout.indexes[group] == nil { layout.indexes[group] = GroupIndex(group: group, pages: []) }
            // The page it was in (same group), else the group's last; read before any page of
            // the group is changed, so no copy of its pages outlives the choice.
            func choose(_ pages: [PageEntry]) -> (target: Int?, emptied: Int?) {
                var candidates: [Int] = []
                if let place = places[id], place.group == group,
                    let position = pages.firstIndex(where: { $0.number == place.number })
                {
                    candidates.append(position)
                }
                if let last = pages.indices.last { candidates.append(last) }
                let fits = candidates.first {
                    size(of: PagePlace(group: group, number: pages[$0].number), pages[$0]) + entrySize
                        <= PageLayout.fillLimit
                }
                return (fits, candidates.first { pages[$0].ids.isEmpty })
            }
            let choice = choose(layout.indexes[group]!.pages)
            // A new page, or the empty page this record left, takes it when it fits nowhere; a
            // record larger than a page gets a page of its own.
            var target = choice.target ?? choice.emptied
            if target == nil {
                let number = layout.indexes[group]!.pages.last.map { $0.number + 1 } ?? 0
                layout.indexes[group]!.pages.append(
                    PageEntry(number: number, tag: RecordTag.unset, ids: [], versions: []))
                sizes[PagePlace(group: group, number: number)] = PageLayout.pageHeader
                target = layout.indexes[group]!.pages.count - 1
            }
            let place = PagePlace(group: group, number: layout.indexes[group]!.pages[target!].number)
            sizes[place] = size(of: place, layout.indexes[group]!.pages[target!]) + entrySize
            layout.indexes[group]!.pages[target!].ids.append(id)
            layout.indexes[group]!.pages[target!].versions.append(written.version)
            dirtyPages.insert(place)
            dirtyGroups.insert(group)
        }
        for place in dirtyPages.sorted(by: { ($0.group, $0.number) < ($1.group, $1.number) }) {
            guard let position = pagePosition(place) else { continue }
            let page = layout.indexes[place.group]!.pages[position]
            let locator = PageLayout.locator(.page, group: place.group, number: place.number, key: keys.locator)
            // Only a page a record left can be empty: new pages are made for a record.
            if page.ids.isEmpty {
                try db.execute(sql: "DELETE FROM page WHERE locator = ?", arguments: [locator])
                try expectOneChange(db, "deleting a page")
                layout.indexes[place.group]!.pages.remove(at: position)
                continue
            }
            let plain = PageCodec.encode(
                zip(page.ids, page.versions).map { id, version in
                    PageRecord(
                        id: id, version: version,
                        payload: changedPayloads[id]
                            ?? store.bytes.withUnsafeBytes { Data($0[store.range(at: store.index(of: id)!)]) })
                })
            let (sealed, tag) = PageCodec.seal(plain, key: keys.records, locator: locator, vaultID: vaultID)
            try upsert(db, table: "page", locator: locator, sealed: sealed)
            layout.indexes[place.group]!.pages[position].tag = tag
        }
        for group in dirtyGroups.sorted() {
            let locator = PageLayout.locator(.index, group: group, key: keys.locator)
            guard let index = layout.indexes[group], !index.pages.isEmpty else {
                try db.execute(sql: "DELETE FROM page_index WHERE locator = ?", arguments: [locator])
                try expectOneChange(db, "deleting a page index")
                layout.indexes[group] = nil
                layout.commit.indexDigests[group] = nil
                continue
            }
            let sealed = index.sealed(key: keys.integrity, locator: locator, vaultID: vaultID)
            try upsert(db, table: "page_index", locator: locator, sealed: sealed)
            layout.commit.indexDigests[group] = BLAKE2b.hash(sealed)
        }
    }

    private static func upsert(_ db: Database, table: String, locator: Data, sealed: Data) throws {
        try db.execute(
            sql:
                "INSERT INTO \(table) (locator, sealed) VALUES (?, ?) ON CONFLICT (locator) DO UPDATE SET sealed = excluded.sealed",
            arguments: [locator, sealed])
        try expectOneChange(db, "a page")
    }
}

extension PageCodec {
    static func encode(_ records: [PageRecord]) -> [UInt8] {
        var writer = ByteWriter(capacity: PageLayout.fillLimit)
        writer.append(UInt32(records.count))
        for record in records {
            writer.append(record.id)
            writer.append(UInt32(record.payload.count))
            writer.append(record.payload)
        }
        return writer.bytes
    }

    /// Opens sealed pages on all cores; each result is the unpadded plaintext, or nil if the
    /// page does not authenticate at its locator or its padding is malformed.
    static func openAll(_ pages: [(locator: Data, sealed: Data)], key: SymmetricKey, vaultID: VaultID) -> [[UInt8]?] {
        var results = [[UInt8]?](repeating: nil, count: pages.count)
        results.withUnsafeMutableBufferPointer { output in
            nonisolated(unsafe) let output = output  // each iteration writes only its own index
            DispatchQueue.concurrentPerform(iterations: pages.count) { position in
                let (locator, sealed) = pages[position]
                let ad = PageLayout.associatedData(vaultID: vaultID, purpose: PageLayout.pagePurpose, locator: locator)
                guard sealed.count > XChaCha20Poly1305.SealedBox.overheadByteCount else { return }
                var plain = [UInt8](repeating: 0, count: sealed.count - XChaCha20Poly1305.SealedBox.overheadByteCount)
                let opened = sealed.withUnsafeBytes { combined in
                    ad.withUnsafeBytes { ad in
                        plain.withUnsafeMutableBytes {
                            XChaCha20Poly1305.open(combined: combined, key: key, associatedData: ad, into: $0)
                        }
                    }
                }
                guard opened,
                    let length = plain.withUnsafeBytes({ try? Padding.unpaddedLength(of: $0, blockSize: $0.count) })
                else {
                    secureWipe(&plain)
                    return
                }
                plain.removeLast(plain.count - length)
                output[position] = plain
            }
        }
        return results
    }
}

import Dispatch
import FinanceCore
import Foundation
import VaultStore

/// `coffer import json`: Coffer's own export, streamed. The file is read once through a window of
/// a few MiB: its small sections (the setup: accounts, categories, clients…) are decoded and
/// checked whole; each long section (updates, transactions, invoices) has its items decoded,
/// checked, encoded and sealed into pages a window at a time, on every core, as soon as the
/// format, currency and accounts before it are known (a long section that comes before them is
/// read again afterwards). Memory holds what the summary needs (values, flows, invoices), never
/// the whole file or a record per transaction. All of it is one vault transaction: a bad item
/// anywhere writes nothing.
extension Ledger {
    /// The sections that can be long, in the order they are loaded.
    static let streamedSections = ["updates", "transactions", "invoices"]

    /// Imports a Coffer JSON export into a vault that holds no data yet, as one change. The
    /// export's categories replace the defaults; its invoice counter is kept outside the log.
    /// A file that is not an export throws `DecodingError` (described by `describe(_:)`); one
    /// whose items are wrong, or a vault with data, throws `CofferError`.
    ///
    /// The records loaded stay on disk: when `thenRead` is false the ledger is left as it was
    /// before the import (for a command that ends here); otherwise it reads the vault again.
    @discardableResult
    public func importExport(_ source: ExportSource, from fileName: String, thenRead: Bool = true, now: Date = Date())
        throws -> (records: Int, currency: Currency)
    {
        let storedCategories = parts.records[.budgetCategory]?.map(\.id) ?? []
        let loaded = StreamedRecords()
        var count = 0
        var currency = Currency.gbp
        do {
            try vault.writeInBulk { writer in
                // Once the format, currency and accounts are read, a long section is loaded as it
                // comes; one before them is loaded after the whole file is read.
                var early: ExportDocument.Converter?
                let outline = try ExportOutline(source) { section, window, membersSoFar in
                    early = early ?? ExportDocument.Converter(prerequisitesIn: membersSoFar)
                    guard let early else { return false }
                    count += try loaded.load(section, in: window, converter: early, into: writer)
                    return true
                }
                let small: [(UUID, FinanceRecord)], keptCounter: Int?
                (currency, small, keptCounter) = try outline.document.records()
                // Checked once the file is known to be an export, which is what a person hears first.
                guard holdsNoUserData else {
                    throw CofferError(
                        .alreadyExists, "This vault already holds data; import only goes into a new vault.",
                        kind: "vault data")
                }
                for (_, record) in small { try record.checkText() }
                count += small.count
                let accounts = small.compactMap { if case .account(let account) = $0.1 { account } else { nil } }
                let converter = ExportDocument.Converter(
                    currency: currency, accountIDs: outline.document.accounts == nil ? nil : Set(accounts.map(\.id)))
                let importsCategories = small.contains { if case .budgetCategory = $0.1 { true } else { false } }
                // The vault's one sender record is replaced, not joined by a second.
                var changes: [RecordChange] = []
                var touched: [UUID] = [], created: [UUID] = []
                for (id, record) in small {
                    if case .invoiceSender = record, let existing = invoiceSenderRecord?.id {
                        changes.append(.put(RecordID(uuid: existing), Data(RecordCodec.encode(record))))
                        touched.append(existing)
                    } else {
                        try RecordCodec.encode(record).withUnsafeBytes {
                            try writer.append(RecordID(uuid: id), group: RecordGrouping.group(of: record), payload: $0)
                        }
                        created.append(id)
                    }
                }
                for section in Self.streamedSections {
                    guard let offset = outline.deferred[section] else { continue }
                    count += try loaded.load(
                        section, in: JSONWindow(source, at: offset), converter: converter, into: writer)
                }
                let settings = VaultSettings(
                    currency: currency, includeReceivables: outline.document.includeReceivables)
                let settingsID = self.settingsID ?? RecordIDs.next()
                changes.append(.put(RecordID(uuid: settingsID), Data(RecordCodec.encode(.settings(settings)))))
                touched.append(settingsID)
                if importsCategories {
                    changes += storedCategories.map { .delete(RecordID(uuid: $0)) }
                    touched += storedCategories
                } else if storedCategories.isEmpty {
                    // Setup, as when a vault is made: outside the change, so undo keeps them.
                    changes += Self.defaultCategories.map {
                        .put(RecordID(uuid: $0.id), Data(RecordCodec.encode(.budgetCategory($0))))
                    }
                }
                if let counter = loaded.invoiceNumbers.counter(after: keptCounter) {
                    let record = FinanceRecord.invoiceCounter(InvoiceCounter(lastNumber: counter))
                    changes.append(
                        .put(RecordID(uuid: invoiceCounter?.id ?? RecordIDs.next()), Data(RecordCodec.encode(record))))
                }
                changes += undoneChanges.map { .delete(RecordID(uuid: $0.id)) }
                let entry = ChangeEntry(
                    sequence: (self.changes.last?.entry.sequence ?? 0) + 1, timestamp: Int64(now.timeIntervalSince1970),
                    summary: "Imported \(count) records from \(fileName)",
                    before: touched.map {
                        .init(recordID: $0, payload: vault.record(RecordID(uuid: $0)).map { Array($0.payload) })
                    } + (created + loaded.ids).map { .init(recordID: $0, payload: nil) })
                changes.append(.put(RecordID(uuid: RecordIDs.next()), Data(RecordCodec.encode(.change(entry)))))
                let summary = try loaded.summary(
                    commit: vault.commitCounter + 1, change: entry.sequence, currency: currency, accounts: accounts)
                changes.append(
                    .put(
                        RecordID(uuid: summaryRecord?.id ?? RecordIDs.next()),
                        Data(RecordCodec.encode(.summary(summary)))))
                return changes
            }
        } catch let error as VaultError where error.code == .duplicateRecord {
            throw CofferError(.invalidInput, "Two records in the file have one id.")
        }
        if thenRead {
            _ = try vault.verify()
            try reload()
        }
        return (count, currency)
    }
}

/// An export's small sections, decoded; its long ones are loaded as they are met (`stream`
/// returns true) or left for later, by where they start.
struct ExportOutline {
    let document: ExportDocument
    /// The file offset of each long section's array that was not loaded on the way.
    let deferred: [String: Int]

    /// `stream` is given each long section's name, the window at its array, and the members
    /// read before it (as a JSON object).
    init(_ source: ExportSource, stream: (String, JSONWindow, [UInt8]) throws -> Bool) throws {
        let window = JSONWindow(source)
        var skeleton = Array("{".utf8)
        var deferred: [String: Int] = [:]
        var keys = Set<String>()
        try window.expect(UInt8(ascii: "{"))
        if try !window.take(UInt8(ascii: "}")) {
            while true {
                let key = try window.key()
                // A member twice would be read one way here and another by JSONDecoder.
                guard keys.insert(key).inserted else { throw JSONWindow.malformed }
                try window.expect(UInt8(ascii: ":"))
                if Ledger.streamedSections.contains(key), try window.peek() == UInt8(ascii: "[") {
                    if try !stream(key, window, skeleton + Array("}".utf8)) {
                        deferred[key] = window.position
                        try window.forEachElement { _ in }
                    }
                    if skeleton.count > 1 { skeleton.append(UInt8(ascii: ",")) }
                    skeleton += try JSONEncoder().encode(key) + Array(":[]".utf8)
                } else {
                    if skeleton.count > 1 { skeleton.append(UInt8(ascii: ",")) }
                    skeleton += try JSONEncoder().encode(key) + Array(":".utf8)
                    skeleton += window.slice(try window.value())
                }
                if try window.take(UInt8(ascii: ",")) { continue }
                try window.expect(UInt8(ascii: "}"))
                break
            }
        }
        skeleton.append(UInt8(ascii: "}"))
        guard try window.peek() == nil else { throw JSONWindow.malformed }
        document = try JSONDecoder().decode(ExportDocument.self, from: Data(skeleton))
        self.deferred = deferred
    }
}

extension ExportDocument.Converter {
    /// The converter for a file whose format, version, currency and accounts are `members`;
    /// nil until all four are there and valid (the whole file's reading then reports what is wrong).
    init?(prerequisitesIn members: [UInt8]) {
        struct Prerequisites: Decodable {
            let format: String
            let version: Int
            let currency: String
            let accounts: [ExportDocument.Account]
        }
        guard let read = try? JSONDecoder().decode(Prerequisites.self, from: Data(members)) else { return nil }
        var document = ExportDocument(currency: read.currency, includeReceivables: true)
        document.format = read.format
        document.version = read.version
        document.accounts = read.accounts
        guard let (currency, records, _) = try? document.records() else { return nil }
        self.init(currency: currency, accountIDs: Set(records.map(\.0)))
    }
}

/// What the long sections brought: their ids (for the change-log entry), and the records the
/// summary is made from.
final class StreamedRecords {
    var ids: [UUID] = []
    var updates: [ValueUpdate] = []
    var flows: [Transaction] = []
    var invoices: [Invoice] = []
    var invoiceNumbers = ExportDocument.InvoiceNumbers()
    var transactions: UInt64 = 0
    var lastTransaction: UInt64 = 0

    /// Items decoded and converted per task.
    static let sliceSize = 1024

    /// Batches converted at once: while the cores convert them, this thread reads on and seals
    /// the batch before them into pages.
    static let batchesInFlight = 2

    /// Streams one section's items into `writer`; returns how many there were.
    func load(
        _ section: String, in window: JSONWindow, converter: ExportDocument.Converter, into writer: BulkRecordWriter
    ) throws -> Int {
        var pending: [Range<Int>] = []
        var first = 0
        var inFlight: [Batch] = []
        func submit() throws {
            guard let start = pending.first?.lowerBound, let end = pending.last?.upperBound else { return }
            inFlight.append(
                Batch(
                    section, bytes: Array(window.slice(start..<end)),
                    items: pending.map { ($0.lowerBound - start)..<($0.upperBound - start) }, first: first,
                    converter: converter))
            first += pending.count
            pending.removeAll(keepingCapacity: true)
            while inFlight.count > Self.batchesInFlight { try add(inFlight.removeFirst(), into: writer) }
        }
        do {
            window.beforeSliding = submit
            try window.forEachElement { pending.append($0) }
            window.beforeSliding = nil
            try submit()
            while !inFlight.isEmpty { try add(inFlight.removeFirst(), into: writer) }
        } catch {
            // Nothing is left running behind a refusal.
            for batch in inFlight { batch.done.wait() }
            throw error
        }
        return first
    }

    /// One slice of items, converted on some core: payloads end to end, or the first failure.
    private struct Slice {
        var encoded = EncodedRecords()
        var records: [FinanceRecord] = []
        var failure: Error?
    }

    /// Items copied out of the window and converted in slices on the global queue.
    private final class Batch: @unchecked Sendable {
        let section: String
        let first: Int
        let done = DispatchGroup()
        /// Each slice's task writes only its own slot; they are read after `done`.
        private let output: UnsafeMutableBufferPointer<Slice>

        init(_ section: String, bytes: [UInt8], items: [Range<Int>], first: Int, converter: ExportDocument.Converter) {
            self.section = section
            self.first = first
            let count = (items.count + sliceSize - 1) / sliceSize
            output = .allocate(capacity: count)
            output.initialize(repeating: Slice())
            for slice in 0..<count {
                done.enter()
                DispatchQueue.global(qos: .userInitiated).async { [self] in
                    let start = slice * sliceSize
                    output[slice] = bytes.withUnsafeBufferPointer {
                        StreamedRecords.convert(
                            section, $0, items[start..<min(items.count, start + sliceSize)], first: first + start,
                            converter: converter)
                    }
                    done.leave()
                }
            }
        }

        deinit {
            output.deinitialize()
            output.deallocate()
        }

        var slices: [Slice] {
            done.wait()
            return Array(output)
        }
    }

    /// Adds a batch's records to the pages, in file order, once it is converted.
    private func add(_ batch: Batch, into writer: BulkRecordWriter) throws {
        let section = batch.section, first = batch.first
        let slices = batch.slices
        for (number, slice) in slices.enumerated() {
            if let failure = slice.failure { throw failure }
            try slice.encoded.add(to: writer)
            ids += slice.encoded.ids
            for (index, record) in slice.records.enumerated() {
                switch record {
                case .update(let update): updates.append(update)
                case .transaction(let transaction):
                    transactions += 1
                    lastTransaction = max(lastTransaction, transaction.sequence)
                    if transaction.flow != nil { flows.append(transaction) }
                case .invoice(let invoice):
                    try invoiceNumbers.insert(
                        invoice, Place(section: section, index: first + number * Self.sliceSize + index))
                    invoices.append(invoice)
                default: break
                }
            }
        }
    }

    private static func convert(
        _ section: String, _ bytes: UnsafeBufferPointer<UInt8>, _ items: ArraySlice<Range<Int>>, first: Int,
        converter: ExportDocument.Converter
    ) -> Slice {
        var slice = Slice()
        /// The items as one JSON array, for `JSONDecoder`.
        var json: Data {
            var array = [UInt8(ascii: "[")]
            for item in items {
                if array.count > 1 { array.append(UInt8(ascii: ",")) }
                array += bytes[item]
            }
            array.append(UInt8(ascii: "]"))
            return Data(array)
        }
        do {
            let records: [(UUID, FinanceRecord)]
            switch section {
            case "updates":
                let decoded =
                    try ExportItemParser.items(bytes, items, ExportItemParser.update)
                    ?? decode(ExportDocument.Update.self, json, section, first)
                records = try decoded.enumerated().map {
                    try converter.update($1, Place(section: section, index: first + $0))
                }
            case "transactions":
                let decoded =
                    try ExportItemParser.items(bytes, items, ExportItemParser.entry)
                    ?? decode(ExportDocument.Entry.self, json, section, first)
                records = try decoded.enumerated().map {
                    try converter.transaction($1, Place(section: section, index: first + $0))
                }
            default:
                records = try decode(ExportDocument.Invoice.self, json, section, first).enumerated().map {
                    let (id, invoice) = try converter.invoice($1, Place(section: section, index: first + $0))
                    return (id, .invoice(invoice))
                }
            }
            for (id, record) in records {
                try slice.encoded.append(id, record)
                slice.records.append(record)
            }
        } catch {
            slice.failure = error
        }
        return slice
    }

    /// The items of one slice; a failure names the item in the whole section (`updates[1234].amount`).
    private static func decode<Item: Decodable>(_ type: Item.Type, _ json: Data, _ section: String, _ first: Int)
        throws -> [Item]
    {
        do {
            return try JSONDecoder().decode([Item].self, from: json)
        } catch let error as DecodingError {
            func located(_ context: DecodingError.Context) -> DecodingError.Context {
                // Bytes that are not JSON at all keep their empty path.
                guard let index = context.codingPath.first?.intValue else { return context }
                let path: [any CodingKey] =
                    [ExportCodingKey(stringValue: section), ExportCodingKey(intValue: first + index)]
                    + context.codingPath.dropFirst()
                return .init(codingPath: path, debugDescription: context.debugDescription)
            }
            switch error {
            case .keyNotFound(let key, let context): throw DecodingError.keyNotFound(key, located(context))
            case .typeMismatch(let type, let context): throw DecodingError.typeMismatch(type, located(context))
            case .valueNotFound(let type, let context): throw DecodingError.valueNotFound(type, located(context))
            case .dataCorrupted(let context): throw DecodingError.dataCorrupted(located(context))
            @unknown default: throw error
            }
        }
    }

    /// The summary of the vault after the import, which held no values, flows or invoices before.
    func summary(commit: UInt64, change: UInt64, currency: Currency, accounts: [Account]) throws -> LedgerSummary {
        let movements = Ledger.movements(of: flows, invoices)
        let portfolio = Ledger.portfolio(
            currency: currency, accounts: accounts, updates: updates, movements: movements, categoryRates: [])
        return LedgerSummary(
            commit: commit, grouping: RecordGrouping.version, lastChange: change,
            lastValueOrder: max(updates.map(\.sequence).max() ?? 0, movements.map(\.order).max() ?? 0),
            lastTransaction: lastTransaction, transactions: transactions,
            monthEnds: try MonthEnds.empty.recomputed(from: nil, portfolio: portfolio, invoices: invoices))
    }
}

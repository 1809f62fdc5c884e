import Foundation
import VaultCrypto

/// Which records are stored together (Specs/vault-format.md, "Format 3: pages"). The layer
/// above names a group for every record, so that what one command needs sits in few pages; the
/// store treats the number as opaque and never writes it where the file shows it.
public struct PageGroup: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// Where records go when nothing else is said.
    public static let unsorted = PageGroup(rawValue: 0)
    public static func < (lhs: PageGroup, rhs: PageGroup) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue, radix: 16) }
}

/// The group a record belongs in, from its id and payload.
public typealias PageGrouping = @Sendable (RecordID, UnsafeRawBufferPointer) -> PageGroup

/// A page: the group it belongs to and its number in that group.
struct PagePlace: Hashable, Sendable {
    let group: PageGroup
    let number: UInt32
}

/// Sizes and names of format 3's sealed pages and page indexes.
enum PageLayout {
    static let formatVersion: UInt16 = 3
    /// Plaintext bytes a page is filled to before a new one starts, so that a full page pads to
    /// exactly the 16 KiB class.
    static let fillLimit = 16 * 1024 - 1
    /// Bytes a record takes in a page besides its payload: id and length.
    static let entryOverhead = RecordID.byteCount + 4
    /// A page's plaintext starts with its record count.
    static let pageHeader = 4

    /// The size class `count` plaintext bytes are padded to: at least one padding byte, then the
    /// next power of two from 1 KiB to 16 KiB, and whole multiples of 16 KiB above.
    static func paddedSize(forContent count: Int) -> Int {
        let needed = count + 1
        guard needed > 16 * 1024 else {
            var size = 1024
            while size < needed { size *= 2 }
            return size
        }
        return (needed + 16 * 1024 - 1) / (16 * 1024) * (16 * 1024)
    }

    static func pad(_ plain: [UInt8]) -> [UInt8] { Padding.pad(plain, blockSize: paddedSize(forContent: plain.count)) }

    /// The key that names rows on disk: derived from the integrity subkey, so a session (which
    /// holds that key) can find pages, and nobody without the vault's keys can tell which row
    /// holds which group.
    static func locatorKey(integrity: SymmetricKey) -> SymmetricKey {
        integrity.deriveSubkey(id: 1, context: KDFContext("CofferPg"))
    }

    enum Role: UInt8 {
        case page = 1
        case index = 2
    }

    /// `BLAKE2b-16(role ‖ group u64 ‖ number u32, key = locator key)`.
    static func locator(_ role: Role, group: PageGroup, number: UInt32 = 0, key: SymmetricKey) -> Data {
        var writer = ByteWriter(capacity: 13)
        writer.append(role.rawValue)
        writer.append(group.rawValue)
        writer.append(number)
        return Data(BLAKE2b.hash(writer.bytes, outputByteCount: 16, key: key))
    }

    /// vault id ‖ purpose ‖ format version ‖ locator: a sealed page or index opens only at its
    /// own row, in its own vault.
    static func associatedData(vaultID: VaultID, purpose: UInt8, locator: Data) -> [UInt8] {
        var writer = ByteWriter(capacity: 35)
        writer.append(vaultID.bytes)
        writer.append(purpose)
        writer.append(formatVersion)
        writer.append(locator)
        return writer.bytes
    }

    static let pagePurpose: UInt8 = 4
    static let indexPurpose: UInt8 = 5
}

/// One page as its group's index lists it: its number, the tag of its ciphertext, and the
/// records in it (ids and versions, in page order). The index, not the page, is what names a
/// damaged page's records.
struct PageEntry: Equatable, Sendable {
    var number: UInt32
    var tag: RecordTag
    var ids: [RecordID]
    var versions: [UInt64]
}

/// A group's index: its pages by number.
struct GroupIndex: Equatable, Sendable {
    let group: PageGroup
    var pages: [PageEntry]

    var recordCount: Int { pages.reduce(0) { $0 + $1.ids.count } }

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 12 + pages.reduce(0) { $0 + 24 + $1.ids.count * 24 })
        writer.append(group.rawValue)
        writer.append(UInt32(pages.count))
        for page in pages {
            writer.append(page.number)
            writer.append(page.tag.bytes)
            writer.append(UInt32(page.ids.count))
            for (id, version) in zip(page.ids, page.versions) {
                writer.append(id)
                writer.append(version)
            }
        }
        return writer.bytes
    }

    func sealed(key: SymmetricKey, locator: Data, vaultID: VaultID) -> Data {
        var padded = PageLayout.pad(encoded())
        defer { secureWipe(&padded) }
        return XChaCha20Poly1305.seal(
            padded, key: key,
            associatedData: PageLayout.associatedData(
                vaultID: vaultID, purpose: PageLayout.indexPurpose, locator: locator)
        ).combined
    }

    /// Opens and parses an index; nil if it does not authenticate or is malformed (pages out of
    /// order, another group's, trailing bytes).
    static func open(_ sealed: Data, group: PageGroup, key: SymmetricKey, locator: Data, vaultID: VaultID)
        -> GroupIndex?
    {
        guard let box = try? XChaCha20Poly1305.SealedBox(combined: sealed),
            let padded = try? XChaCha20Poly1305.open(
                box, key: key,
                associatedData: PageLayout.associatedData(
                    vaultID: vaultID, purpose: PageLayout.indexPurpose, locator: locator)),
            let length = padded.withUnsafeBytes({ try? Padding.unpaddedLength(of: $0, blockSize: padded.count) })
        else { return nil }
        return parse(padded.prefix(length), group: group)
    }

    /// An index's plaintext, unpadded; nil if malformed.
    static func parse<Bytes: Collection>(_ plain: Bytes, group: PageGroup) -> GroupIndex? where Bytes.Element == UInt8 {
        var reader = ByteReader(plain, onTruncation: { VaultError(.integrityFailure, "truncated") })
        guard let raw = try? reader.readUInt64(), raw == group.rawValue, let count = try? reader.readUInt32() else {
            return nil
        }
        var pages: [PageEntry] = []
        for _ in 0..<count {
            guard let number = try? reader.readUInt32(), let tag = try? reader.read(16),
                let records = try? reader.readUInt32(), Int(records) <= reader.remaining / 24,
                number > (pages.last?.number ?? 0) || pages.isEmpty
            else { return nil }
            var entry = PageEntry(number: number, tag: RecordTag(tag), ids: [], versions: [])
            entry.ids.reserveCapacity(Int(records))
            entry.versions.reserveCapacity(Int(records))
            for _ in 0..<records {
                guard let id = try? reader.readRecordID(), let version = try? reader.readUInt64() else { return nil }
                entry.ids.append(id)
                entry.versions.append(version)
            }
            guard !entry.ids.isEmpty else { return nil }
            pages.append(entry)
        }
        guard reader.remaining == 0 else { return nil }
        return GroupIndex(group: group, pages: pages)
    }
}

/// A group's index sealed at its place, with the digest of it the commit record keeps.
struct SealedIndex {
    let group: PageGroup
    let locator: Data
    let sealed: Data
    let digest: [UInt8]
}

extension GroupIndex {
    /// `indexes` sealed on all cores, in their order: a million records' indexes are 24 MB to
    /// encode, encrypt and hash, a quarter of a second of one core at the end of a restore.
    /// All are held sealed at once until written (24 MB at a million records, where one at a
    /// time held one group's).
    static func sealAll(_ indexes: [GroupIndex], keys: OperationalKeys, vaultID: VaultID) -> [SealedIndex] {
        var results = [SealedIndex?](repeating: nil, count: indexes.count)
        results.withUnsafeMutableBufferPointer { output in
            nonisolated(unsafe) let output = output  // each iteration writes only its own index
            DispatchQueue.concurrentPerform(iterations: indexes.count) { position in
                let index = indexes[position]
                let locator = PageLayout.locator(.index, group: index.group, key: keys.locator)
                let sealed = index.sealed(key: keys.integrity, locator: locator, vaultID: vaultID)
                output[position] = SealedIndex(
                    group: index.group, locator: locator, sealed: sealed, digest: BLAKE2b.hash(sealed))
            }
        }
        return results.map { $0! }
    }
}

/// A page's plaintext: `count u32 ‖ (id 16 ‖ length u32 ‖ payload)…`, padded to its size class.
enum PageCodec {
    static func seal(_ plain: [UInt8], key: SymmetricKey, locator: Data, vaultID: VaultID) -> (Data, RecordTag) {
        var padded = PageLayout.pad(plain)
        defer { secureWipe(&padded) }
        let box = XChaCha20Poly1305.seal(
            padded, key: key,
            associatedData: PageLayout.associatedData(
                vaultID: vaultID, purpose: PageLayout.pagePurpose, locator: locator))
        return (box.combined, box.combined.withUnsafeBytes { RecordCipher.tag(of: $0) })
    }

    /// The records of an opened, unpadded page: each id with the range of its payload in `plain`;
    /// nil if the bytes are malformed.
    static func entries(of plain: UnsafeRawBufferPointer) -> [(id: RecordID, payload: Range<Int>)]? {
        guard plain.count >= 4 else { return nil }
        let count = Int(plain.loadUnaligned(as: UInt32.self).littleEndian)
        guard count <= (plain.count - 4) / PageLayout.entryOverhead else { return nil }
        var entries: [(id: RecordID, payload: Range<Int>)] = []
        entries.reserveCapacity(count)
        var offset = 4
        for _ in 0..<count {
            guard plain.count - offset >= PageLayout.entryOverhead else { return nil }
            let id = RecordID(unsafe: plain.baseAddress! + offset)
            let length = Int(plain.loadUnaligned(fromByteOffset: offset + 16, as: UInt32.self).littleEndian)
            offset += PageLayout.entryOverhead
            guard length <= plain.count - offset else { return nil }
            entries.append((id, offset..<offset + length))
            offset += length
        }
        guard offset == plain.count else { return nil }
        return entries
    }
}

/// Format 3's commit record: the counter, the record count, the header's digest, the device id,
/// and every group with the digest of its sealed index, in group order.
struct PagedCommit: Equatable {
    var counter: UInt64
    var recordCount: UInt64
    var headerDigest: [UInt8]
    var deviceID: DeviceID
    var indexDigests: [PageGroup: [UInt8]]

    static let groupEntryByteCount = 8 + 32

    private static func associatedData(vaultID: VaultID) -> [UInt8] {
        var writer = ByteWriter(capacity: 19)
        writer.append(vaultID.bytes)
        writer.append(UInt8(3))
        writer.append(PageLayout.formatVersion)
        return writer.bytes
    }

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 68 + indexDigests.count * Self.groupEntryByteCount)
        writer.append(counter)
        writer.append(recordCount)
        writer.append(headerDigest)
        writer.append(deviceID.bytes)
        writer.append(UInt32(indexDigests.count))
        for group in indexDigests.keys.sorted() {
            writer.append(group.rawValue)
            writer.append(indexDigests[group]!)
        }
        return writer.bytes
    }

    func sealed(key: SymmetricKey, vaultID: VaultID) -> Data {
        XChaCha20Poly1305.seal(
            PageLayout.pad(encoded()), key: key, associatedData: Self.associatedData(vaultID: vaultID)
        )
        .combined
    }

    static func open(_ sealed: Data, key: SymmetricKey, vaultID: VaultID) -> PagedCommit? {
        guard let box = try? XChaCha20Poly1305.SealedBox(combined: sealed),
            let padded = try? XChaCha20Poly1305.open(box, key: key, associatedData: associatedData(vaultID: vaultID)),
            let length = padded.withUnsafeBytes({ try? Padding.unpaddedLength(of: $0, blockSize: padded.count) })
        else { return nil }
        return parse(padded.prefix(length))
    }

    /// A commit record's plaintext, unpadded; nil if malformed.
    static func parse<Bytes: Collection>(_ plain: Bytes) -> PagedCommit? where Bytes.Element == UInt8 {
        var reader = ByteReader(plain, onTruncation: { VaultError(.integrityFailure, "truncated") })
        guard let counter = try? reader.readUInt64(), let count = try? reader.readUInt64(),
            let header = try? reader.read(32), let device = try? reader.read(DeviceID.byteCount),
            let groupCount = try? reader.readUInt32(), Int(groupCount) <= reader.remaining / groupEntryByteCount
        else { return nil }
        var digests: [PageGroup: [UInt8]] = [:]
        var previous: UInt64?
        for _ in 0..<groupCount {
            guard let raw = try? reader.readUInt64(), previous.map({ raw > $0 }) ?? true,
                let digest = try? reader.read(32)
            else { return nil }
            previous = raw
            digests[PageGroup(rawValue: raw)] = digest
        }
        guard reader.remaining == 0 else { return nil }
        return PagedCommit(
            counter: counter, recordCount: count, headerDigest: header, deviceID: DeviceID(unchecked: device),
            indexDigests: digests)
    }
}

/// Fuzzing's way in: what format 3 reads once a page, an index or a commit record has
/// authenticated (so only a bug in a writer, or a broken key, could feed them hostile bytes):
/// the padding, then each parser, on the same bytes. Package-only, like the header's.
package func fuzzPageDecoders(_ bytes: [UInt8]) {
    let plain =
        bytes.withUnsafeBytes { raw in
            (try? Padding.unpaddedLength(of: raw, blockSize: max(1, raw.count))).map { Array(bytes.prefix($0)) }
        } ?? bytes
    plain.withUnsafeBytes { _ = PageCodec.entries(of: $0) }
    let group = plain.count >= 8 ? plain.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self).littleEndian } : 0
    if let index = GroupIndex.parse(plain, group: PageGroup(rawValue: group)) { _ = index.encoded() }
    if let commit = PagedCommit.parse(plain) { _ = commit.encoded() }
}

import Foundation

/// Reads the items most of an export is made of (value updates and transactions) straight from
/// their bytes: `JSONDecoder` spent most of a bulk import finding its way through generic
/// containers. It knows only the shapes Coffer writes and gives up (nil) on anything else: a key
/// it does not know or that comes twice, a number that is not a plain whole number, bytes that
/// are not UTF-8. The caller then decodes the same bytes with `JSONDecoder`, so this reader can
/// only accept less than `JSONDecoder` accepts, never more, and reads the same values from it.
struct ExportItemParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The values at `ranges` of `bytes`, each read by `element`; nil when any is not read whole.
    static func items<Element>(
        _ bytes: UnsafeBufferPointer<UInt8>, _ ranges: ArraySlice<Range<Int>>,
        _ element: (inout ExportItemParser) -> Element?
    ) -> [Element]? {
        var elements: [Element] = []
        elements.reserveCapacity(ranges.count)
        for range in ranges {
            var parser = ExportItemParser(UnsafeBufferPointer(rebasing: bytes[range]))
            guard let next = element(&parser), parser.atEnd else { return nil }
            elements.append(next)
        }
        return elements
    }

    private var atEnd: Bool {
        mutating get {
            skipWhitespace()
            return position == bytes.count
        }
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// Reads an object: `member` is called with each key and reads its value; false from it, a
    /// key twice or malformed bytes give up.
    private mutating func object(_ keys: [[UInt8]], _ member: (inout ExportItemParser, Int) -> Bool) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        if take(UInt8(ascii: "}")) { return true }
        var seen: UInt32 = 0
        repeat {
            guard let key = keyIndex(keys), seen & (1 << key) == 0, take(UInt8(ascii: ":")) else { return false }
            seen |= 1 << key
            guard member(&self, key) else { return false }
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}"))
    }

    /// Which of `keys` the string at `position` is (keys have no escapes).
    private mutating func keyIndex(_ keys: [[UInt8]]) -> Int? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
            guard bytes[position] != UInt8(ascii: "\\") else { return nil }
            position += 1
        }
        guard position < bytes.count else { return nil }
        let key = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        position += 1
        return keys.firstIndex { $0.count == key.count && memcmp($0, key.baseAddress!, key.count) == 0 }
    }

    /// A string value: ASCII or valid UTF-8, with JSON's escapes.
    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        var plain = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { return nil }
            if byte == UInt8(ascii: "\\") || byte >= 0x80 { plain = false }
            position += byte == UInt8(ascii: "\\") ? 2 : 1
        }
        guard position < bytes.count else { return nil }
        let raw = UnsafeBufferPointer(rebasing: bytes[start..<position])
        position += 1
        if plain { return String(decoding: raw, as: UTF8.self) }
        return Self.unescaped(raw)
    }

    private static func unescaped(_ raw: UnsafeBufferPointer<UInt8>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var index = 0
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= raw.count else { return nil }
            var value: UInt32 = 0
            for byte in raw[at..<at + 4] {
                guard let digit = Int(String(UnicodeScalar(byte)), radix: 16) else { return nil }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        while index < raw.count {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                index += 1
                continue
            }
            guard index + 1 < raw.count else { return nil }
            let escape = raw[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                // Only characters outside the surrogate range: a pair is left to JSONDecoder.
                guard let code = hex4(index), !(0xD800...0xDFFF).contains(code), let scalar = Unicode.Scalar(code)
                else { return nil }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
                index += 4
            default: return nil
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// A string, or null (`.some(nil)`).
    private mutating func optionalString() -> String?? {
        if takeNull() { return .some(nil) }
        return string().map { .some($0) }
    }

    private mutating func takeNull() -> Bool {
        skipWhitespace()
        guard bytes.count - position >= 4, bytes[position] == UInt8(ascii: "n"),
            bytes[position + 1] == UInt8(ascii: "u"),
            bytes[position + 2] == UInt8(ascii: "l"), bytes[position + 3] == UInt8(ascii: "l")
        else { return false }
        position += 4
        return true
    }

    /// A whole number without sign, fraction or exponent, as JSON writes one (no leading zero).
    private mutating func unsigned() -> UInt64? {
        skipWhitespace()
        let start = position
        var value: UInt64 = 0
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(bytes[position] - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
            position += 1
        }
        guard position > start, position - start == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        if position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        return value
    }

    // MARK: Items

    private static let updateKeys = ["id", "account", "date", "amount", "sequence", "note"].map { Array($0.utf8) }

    static func update(_ parser: inout ExportItemParser) -> ExportDocument.Update? {
        var id: String?, account: String?, date: String?, amount: String?, sequence: UInt64?, note: String?? = nil
        let read = parser.object(updateKeys) { parser, key in
            switch key {
            case 0: id = parser.string(); return id != nil
            case 1: account = parser.string(); return account != nil
            case 2: date = parser.string(); return date != nil
            case 3: amount = parser.string(); return amount != nil
            case 4: sequence = parser.unsigned(); return sequence != nil
            default: note = parser.optionalString(); return note != nil
            }
        }
        guard read, let id, let account, let date, let amount, let sequence else { return nil }
        return .init(id: id, account: account, date: date, amount: amount, sequence: sequence, note: note ?? nil)
    }

    private static let entryKeys = [
        "id", "amount", "type", "target", "note", "date", "sequence", "importAccount", "importHash", "flow",
    ].map { Array($0.utf8) }
    private static let targetKeys = ["kind", "id"].map { Array($0.utf8) }
    private static let flowKeys = ["from", "to", "order"].map { Array($0.utf8) }

    static func entry(_ parser: inout ExportItemParser) -> ExportDocument.Entry? {
        var id: String?, amount: String?, type: String?, target: ExportDocument.Target?, note: String?? = nil
        var date: String?, sequence: UInt64?, importAccount: String?? = nil, importHash: String?? = nil
        var flow: ExportDocument.Flow?? = nil
        let read = parser.object(entryKeys) { parser, key in
            switch key {
            case 0: id = parser.string(); return id != nil
            case 1: amount = parser.string(); return amount != nil
            case 2: type = parser.string(); return type != nil
            case 3: target = parser.target(); return target != nil
            case 4: note = parser.optionalString(); return note != nil
            case 5: date = parser.string(); return date != nil
            case 6: sequence = parser.unsigned(); return sequence != nil
            case 7: importAccount = parser.optionalString(); return importAccount != nil
            case 8: importHash = parser.optionalString(); return importHash != nil
            default:
                if parser.takeNull() { flow = .some(nil) } else { flow = parser.flow().map { .some($0) } }
                return flow != nil
            }
        }
        guard read, let id, let amount, let type, let target, let date, let sequence else { return nil }
        return .init(
            id: id, amount: amount, type: type, target: target, note: note ?? nil, date: date, sequence: sequence,
            importAccount: importAccount ?? nil, importHash: importHash ?? nil, flow: flow ?? nil)
    }

    private mutating func target() -> ExportDocument.Target? {
        var kind: String?, id: String?? = nil
        let read = object(Self.targetKeys) { parser, key in
            if key == 0 {
                kind = parser.string()
                return kind != nil
            }
            id = parser.optionalString()
            return id != nil
        }
        guard read, let kind else { return nil }
        return .init(kind: kind, id: id ?? nil)
    }

    private mutating func flow() -> ExportDocument.Flow? {
        var from: String?? = nil, to: String?? = nil, order: UInt64?
        let read = object(Self.flowKeys) { parser, key in
            switch key {
            case 0: from = parser.optionalString(); return from != nil
            case 1: to = parser.optionalString(); return to != nil
            default: order = parser.unsigned(); return order != nil
            }
        }
        guard read, let order else { return nil }
        return .init(from: from ?? nil, to: to ?? nil, order: order)
    }
}

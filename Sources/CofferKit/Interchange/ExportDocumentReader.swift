import Dispatch
import Foundation

/// Reads a Coffer JSON export on every core.
///
/// Foundation's `JSONDecoder` is single-threaded and was half of a bulk import's time. An export
/// is one object whose bulk is three long arrays of small, independent objects, so the reader
/// finds where each element of those arrays starts and ends (a scan that only tracks strings and
/// brackets), decodes the rest of the document with the long arrays emptied, and decodes the
/// arrays in slices in parallel. Whenever the scan or any slice fails, it decodes the whole
/// document the ordinary way instead, so malformed input gets exactly `JSONDecoder`'s error and
/// the fast path can never accept what the ordinary one would refuse.
public enum ExportDocumentReader {
    /// Smaller documents are decoded the ordinary way: splitting them would not pay.
    static let parallelThreshold = 1 << 20

    public static func decode(_ data: Data) throws -> ExportDocument {
        if data.count >= parallelThreshold, let document = decodeInParallel(data) { return document }
        return try JSONDecoder().decode(ExportDocument.self, from: data)
    }

    /// Nil when the document is not shaped as expected or does not decode; the caller then
    /// decodes it the ordinary way, which reports the problem.
    static func decodeInParallel(_ data: Data) -> ExportDocument? {
        data.withUnsafeBytes { raw -> ExportDocument? in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard var scanner = Scanner(bytes), let members = scanner.topLevelMembers() else { return nil }
            var skeleton = [UInt8]()
            skeleton.reserveCapacity(1 << 16)
            var copiedUpTo = 0
            var arrays: [String: [Range<Int>]] = [:]
            for member in members
            where bulkKeys.contains(member.key) && bytes[member.value.lowerBound] == UInt8(ascii: "[") {
                guard arrays[member.key] == nil, let elements = scanner.elements(ofArrayAt: member.value) else {
                    return nil
                }
                arrays[member.key] = elements
                skeleton.append(contentsOf: bytes[copiedUpTo..<member.value.lowerBound])
                skeleton.append(contentsOf: Array("[]".utf8))
                copiedUpTo = member.value.upperBound
            }
            guard !arrays.isEmpty else { return nil }
            skeleton.append(contentsOf: bytes[copiedUpTo...])
            guard var document = try? JSONDecoder().decode(ExportDocument.self, from: Data(skeleton)) else {
                return nil
            }
            if let elements = arrays["updates"] {
                guard let updates = decodeSlices(ExportDocument.Update.self, elements, bytes) else { return nil }
                document.updates = updates
            }
            if let elements = arrays["transactions"] {
                guard let transactions = decodeSlices(ExportDocument.Entry.self, elements, bytes) else { return nil }
                document.transactions = transactions
            }
            if let elements = arrays["invoices"] {
                guard let invoices = decodeSlices(ExportDocument.Invoice.self, elements, bytes) else { return nil }
                document.invoices = invoices
            }
            return document
        }
    }

    private static let bulkKeys: Set<String> = ["updates", "transactions", "invoices"]

    /// Decodes consecutive elements as JSON arrays of up to a few thousand, on every core.
    private static func decodeSlices<Element: Decodable & Sendable>(
        _ type: Element.Type, _ elements: [Range<Int>], _ bytes: UnsafeBufferPointer<UInt8>
    ) -> [Element]? {
        guard !elements.isEmpty else { return [] }
        let sliceCount = min(
            elements.count, max(1, elements.count / 2048), ProcessInfo.processInfo.activeProcessorCount * 8)
        let perSlice = (elements.count + sliceCount - 1) / sliceCount
        var decoded = [[Element]?](repeating: nil, count: sliceCount)
        decoded.withUnsafeMutableBufferPointer { output in
            // Each slice writes only its own slot.
            nonisolated(unsafe) let output = output, bytes = bytes
            DispatchQueue.concurrentPerform(iterations: sliceCount) { slice in
                let first = slice * perSlice, last = min(elements.count, first + perSlice) - 1
                guard first <= last else { output[slice] = []; return }
                var json = [UInt8]()
                json.reserveCapacity(elements[last].upperBound - elements[first].lowerBound + 2)
                json.append(UInt8(ascii: "["))
                json.append(
                    contentsOf: UnsafeBufferPointer(
                        rebasing: bytes[elements[first].lowerBound..<elements[last].upperBound]))
                json.append(UInt8(ascii: "]"))
                output[slice] = try? JSONDecoder().decode([Element].self, from: Data(json))
            }
        }
        var all = [Element]()
        all.reserveCapacity(elements.count)
        for slice in decoded {
            guard let slice else { return nil }
            all.append(contentsOf: slice)
        }
        return all.count == elements.count ? all : nil
    }

    /// Finds value boundaries without building values. It checks that strings end and brackets
    /// match; everything else is left to `JSONDecoder`, which sees every byte in the end.
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        init?(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard !bytes.isEmpty else { return nil }
            self.bytes = bytes
        }

        /// The top-level object's keys (without escapes) and the byte range of each value.
        mutating func topLevelMembers() -> [(key: String, value: Range<Int>)]? {
            skipWhitespace()
            guard consume(UInt8(ascii: "{")) else { return nil }
            var members: [(key: String, value: Range<Int>)] = []
            skipWhitespace()
            if consume(UInt8(ascii: "}")) { return members }
            while true {
                skipWhitespace()
                guard let keyRange = string(), !bytes[keyRange].contains(UInt8(ascii: "\\")) else { return nil }
                skipWhitespace()
                guard consume(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                let start = position
                guard skipValue() else { return nil }
                members.append(
                    (String(decoding: UnsafeBufferPointer(rebasing: bytes[keyRange]), as: UTF8.self), start..<position))
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                return consume(UInt8(ascii: "}")) ? members : nil
            }
        }

        /// The byte range of every element of the array spanning `range`.
        mutating func elements(ofArrayAt range: Range<Int>) -> [Range<Int>]? {
            position = range.lowerBound + 1
            var elements: [Range<Int>] = []
            skipWhitespace()
            if consume(UInt8(ascii: "]")) { return position == range.upperBound ? elements : nil }
            while true {
                skipWhitespace()
                let start = position
                guard skipValue() else { return nil }
                elements.append(start..<position)
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                return consume(UInt8(ascii: "]")) && position == range.upperBound ? elements : nil
            }
        }

        private mutating func consume(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        private mutating func skipWhitespace() {
            while position < bytes.count, Self.isWhitespace(bytes[position]) { position += 1 }
        }

        private static func isWhitespace(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: true
            default: false
            }
        }

        /// The contents of the string at `position` (between its quotes).
        private mutating func string() -> Range<Int>? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            let start = position
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\\"): position += 2
                case UInt8(ascii: "\""): position += 1; return start..<(position - 1)
                default: position += 1
                }
            }
            return nil
        }

        private mutating func skipValue() -> Bool {
            guard position < bytes.count else { return false }
            switch bytes[position] {
            case UInt8(ascii: "\""):
                return string() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var open: [UInt8] = []
                while position < bytes.count {
                    switch bytes[position] {
                    case UInt8(ascii: "\""):
                        guard string() != nil else { return false }
                        continue
                    case UInt8(ascii: "{"): open.append(UInt8(ascii: "}"))
                    case UInt8(ascii: "["): open.append(UInt8(ascii: "]"))
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        guard open.popLast() == bytes[position] else { return false }
                        if open.isEmpty { position += 1; return true }
                    default: break
                    }
                    position += 1
                }
                return false
            default:
                let start = position
                scalar: while position < bytes.count {
                    switch bytes[position] {
                    case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"): break scalar
                    case let byte where Self.isWhitespace(byte): break scalar
                    default: position += 1
                    }
                }
                return position > start
            }
        }
    }
}

extension ExportDocumentReader {
    /// Where and why a document failed to decode, for the message that refuses it.
    public static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context): "'\(key.stringValue)' is missing at \(path(context))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong value at \(path(context))"
        case DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty ? "not valid JSON" : "invalid value at \(path(context))"
        default: "unreadable"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(
            in: CharacterSet(charactersIn: "."))
    }
}

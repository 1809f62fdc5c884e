import CofferTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP exchange as the tests see it on the wire.
struct HTTPReply {
    let status: Int
    /// Lower-cased names; a name sent twice keeps its values joined by ", ".
    let headers: [String: String]
    let setCookies: [String]
    let body: String

    /// The page's CSRF token (every form of a signed-in page carries it).
    var csrf: String? {
        guard let range = body.range(of: #"name="csrf" value="[0-9a-f]{64}""#, options: .regularExpression) else {
            return nil
        }
        return String(body[range].dropFirst(#"name="csrf" value=""#.count).dropLast())
    }

    /// The page's text without its markup, entities left as written.
    var text: String { body.replacingOccurrences(of: "<[^>]+>", with: " ", options: .regularExpression) }
}

/// A raw HTTP/1.1 client over a socket: the tests choose every byte (a forged Host, a missing
/// Origin, a 100 MB body, a client that never finishes), which no URL session lets them do.
enum RawHTTP {
    static func connect(port: Int, ipv6: Bool = false) throws -> Int32 {
        let socket = Glibc.socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EIO) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            address.sin6_addr = in6addr_loopback
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else {
            close(socket)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED)
        }
        return socket
    }

    /// Sends all of `bytes`; false when the server closed the connection first.
    @discardableResult
    static func send(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count <= 0 { return false }
            sent += count
        }
        return true
    }

    static func receiveAll(_ socket: Int32) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return received
    }

    static func parse(_ bytes: [UInt8]) -> HTTPReply? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return nil }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        var headers: [String: String] = [:]
        var cookies: [String] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if name == "set-cookie" { cookies.append(value) }
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        return HTTPReply(status: status, headers: headers, setCookies: cookies, body: String(text[split.upperBound...]))
    }
}

/// `coffer web` running in a sandbox, driven over real HTTP.
final class WebServerUnderTest: @unchecked Sendable {
    let child: Child
    let port: Int
    let token: String
    var cookie: String?
    var csrf: String?

    /// Starts `coffer web --no-open` and waits for the address it prints.
    init(_ sandbox: Sandbox, arguments: [String] = [], environment: [String: String]) throws {
        child = try sandbox.start(["web", "--no-open"] + arguments, environment: environment)
        var printed = ""
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, child.isRunning {
            printed = (try? String(contentsOf: child.stdout, encoding: .utf8)) ?? ""
            if printed.contains("\n") { break }
            usleep(20_000)
        }
        guard
            let range = printed.range(
                of: #"Open http://127\.0\.0\.1:[0-9]+/#token=[0-9a-f]{64}"#, options: .regularExpression)
        else {
            child.kill()
            throw WebTestError(
                "coffer web printed no address: \(printed) \((try? String(contentsOf: child.stderr, encoding: .utf8)) ?? "")"
            )
        }
        let address = printed[range]
        let afterHost = address.split(separator: ":")[2]
        port = Int(afterHost.prefix { $0.isNumber })!
        token = String(address.suffix(64))
    }

    deinit { child.kill() }

    var origin: String { "http://127.0.0.1:\(port)" }

    /// One request with `Connection: close`; the Host is the server's own unless given.
    func request(
        _ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil,
        withCookie: Bool = true, ipv6: Bool = false
    ) throws -> HTTPReply {
        var fields = ["Host": ipv6 ? "[::1]:\(port)" : "127.0.0.1:\(port)", "Connection": "close"]
        if withCookie, let cookie { fields["Cookie"] = "coffer-\(port)=\(cookie)" }
        if let body {
            fields["Content-Type"] = "application/x-www-form-urlencoded"
            fields["Content-Length"] = "\(body.utf8.count)"
        }
        fields.merge(headers) { $1 }
        let head = "\(method) \(path) HTTP/1.1\r\n" + fields.map { "\($0.key): \($0.value)\r\n" }.joined() + "\r\n"
        let socket = try RawHTTP.connect(port: port, ipv6: ipv6)
        defer { close(socket) }
        RawHTTP.send(socket, Array((head + (body ?? "")).utf8))
        guard let reply = RawHTTP.parse(RawHTTP.receiveAll(socket)) else {
            throw WebTestError("no HTTP reply to \(method) \(path)")
        }
        return reply
    }

    func get(_ path: String, withCookie: Bool = true) throws -> HTTPReply {
        try request("GET", path, withCookie: withCookie)
    }

    /// A form posted as the page would: from this origin, with the session's CSRF token.
    func post(_ path: String, _ fields: [(String, String)], csrf given: String? = nil, origin: String? = nil)
        throws -> HTTPReply
    {
        let all = [("csrf", given ?? csrf ?? "")] + fields
        return try request("POST", path, headers: ["Origin": origin ?? self.origin], body: Self.encode(all))
    }

    static func encode(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return fields.map {
            "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!.replacingOccurrences(of: "%20", with: "+"))"
        }.joined(separator: "&")
    }

    /// Exchanges the printed token for the session cookie, then reads the CSRF token off a page.
    @discardableResult
    func connect() throws -> HTTPReply {
        let reply = try request("POST", "/session", headers: ["Origin": origin], body: "token=\(token)")
        guard reply.status == 303, let set = reply.setCookies.first,
            let value = set.split(separator: ";").first?.split(separator: "=").last
        else { throw WebTestError("the token was not exchanged: \(reply.status)") }
        cookie = String(value)
        csrf = try get("/").csrf
        return reply
    }

    /// Waits for the server to end by itself; its exit status, or nil if it is still running.
    func exit(within seconds: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while child.isRunning, Date() < deadline { usleep(20_000) }
        return child.isRunning ? nil : child.wait()
    }

    var output: String {
        ((try? String(contentsOf: child.stdout, encoding: .utf8)) ?? "")
            + ((try? String(contentsOf: child.stderr, encoding: .utf8)) ?? "")
    }
}

struct WebTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

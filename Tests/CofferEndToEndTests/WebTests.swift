import CofferTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `coffer web` attacked over real HTTP (Specs/web.md, SECURITY.md "The web app"): every line
/// of the promise is tried by a client that chooses each byte.
@Suite struct WebTests {
    let sandbox = Sandbox()
    static let passphrase = "web passphrase long enough"
    var environment: [String: String] { ["COFFER_PASSPHRASE": Self.passphrase, "COFFER_TODAY": "2026-12-06"] }

    func cli(_ arguments: String...) throws -> RunResult {
        let result = try sandbox.run(arguments, environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result
    }

    /// A vault with one account and the default budget categories.
    func setUp() throws {
        _ = try sandbox.initVault(passphrase: Self.passphrase)
        _ = try cli(
            "account", "add", "Marcus Saver", "--category", "Savings", "--value", "4321.09", "--date", "2026-11-01")
    }

    func log() throws -> String { try cli("log").stdout }

    func served(_ arguments: [String] = [], environment: [String: String]? = nil) throws -> WebServerUnderTest {
        try WebServerUnderTest(sandbox, arguments: arguments, environment: environment ?? self.environment)
    }

    static let securityHeaders = [
        "content-security-policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'",
        "cache-control": "no-store", "referrer-policy": "no-referrer", "x-content-type-options": "nosniff",
        "cross-origin-opener-policy": "same-origin", "cross-origin-resource-policy": "same-origin",
    ]

    func expectSecurityHeaders(_ reply: HTTPReply, _ what: String) {
        for (name, value) in Self.securityHeaders {
            #expect(reply.headers[name] == value, "\(what): \(name)")
        }
    }

    @Test func onlyLoopbackIsBoundAndTheServerPrintsNoSecret() throws {
        try setUp()
        let server = try served()
        // Every listening socket on the port is 127.0.0.1 or ::1 (/proc/net/tcp's hex addresses).
        let portHex = String(format: "%04X", server.port)
        var listening: [String] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let rows = ((try? String(contentsOfFile: table, encoding: .utf8)) ?? "").split(separator: "\n").dropFirst()
            for row in rows {
                let columns = row.split(separator: " ")
                guard columns.count > 3, columns[3] == "0A", columns[1].hasSuffix(":\(portHex)") else { continue }
                listening.append(String(columns[1].split(separator: ":")[0]))
            }
        }
        #expect(!listening.isEmpty)
        #expect(listening.allSatisfy { $0 == "0100007F" || $0 == "00000000000000000000000001000000" }, "\(listening)")
        try server.connect()
        #expect(try server.get("/").text.contains("Marcus Saver"))
        // Nothing of the vault on the terminal or in the process list.
        let commandLine = (try? String(contentsOfFile: "/proc/\(server.child.pid)/cmdline", encoding: .utf8)) ?? ""
        for secret in [Self.passphrase, "Marcus Saver", "4,321.09", "4321.09"] {
            #expect(!server.output.contains(secret))
            #expect(!commandLine.contains(secret))
        }
    }

    @Test func withoutTheCookieEveryRequestGets401AndNoData() throws {
        try setUp()
        let server = try served()
        for path in ["/", "/assets", "/budget", "/budget?month=2026-11", "/?as-of=2026-11-30"] {
            let reply = try server.get(path, withCookie: false)
            #expect(reply.status == 401, "\(path)")
            #expect(!reply.body.contains("Marcus") && !reply.body.contains("4,321"), "\(path)")
            expectSecurityHeaders(reply, path)
        }
        try server.connect()
        let accountPath = try #require(
            server.get("/assets").body.range(of: "/accounts/[0-9A-F-]{36}", options: .regularExpression).map {
                String(try server.get("/assets").body[$0])
            })
        let stolen = try server.request(
            "GET", accountPath, headers: ["Cookie": "coffer-\(server.port)=\(String(repeating: "0", count: 64))"],
            withCookie: false)
        #expect(stolen.status == 401 && !stolen.body.contains("Marcus"))
        // A POST without the cookie changes nothing, whatever else it carries.
        let before = try log()
        let refused = try server.request(
            "POST", "/budget/entries", headers: ["Origin": server.origin],
            body: WebServerUnderTest.encode([
                ("csrf", server.csrf!), ("kind", "spend"), ("amount", "5"), ("what", "gro"),
            ]),
            withCookie: false)
        #expect(refused.status == 401)
        #expect(try log() == before)
    }

    @Test func theTokenIsSpentByItsFirstUseAndTheCookieIsStrict() throws {
        try setUp()
        let server = try served()
        let wrong = try server.request(
            "POST", "/session", headers: ["Origin": server.origin], body: "token=\(String(repeating: "a", count: 64))")
        #expect(wrong.status == 401 && wrong.setCookies.isEmpty)
        let first = try server.connect()
        let cookie = try #require(first.setCookies.first)
        let attributes = Set(cookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        #expect(
            attributes.contains("httponly") && attributes.contains("samesite=strict") && attributes.contains("path=/"))
        #expect(!attributes.contains { $0.hasPrefix("domain") } && !attributes.contains { $0.hasPrefix("expires") })
        #expect(cookie.hasPrefix("coffer-\(server.port)="))
        let again = try server.request(
            "POST", "/session", headers: ["Origin": server.origin], body: "token=\(server.token)", withCookie: false)
        #expect(again.status == 401 && again.setCookies.isEmpty)
        // The token is never in a URL the server reads: a query string does not connect.
        #expect(try server.get("/?token=\(server.token)", withCookie: false).status == 401)
    }

    @Test func anotherHostNameGets421() throws {
        try setUp()
        let server = try served()
        try server.connect()
        for host in [
            "evil.example:\(server.port)", "127.0.0.1:\(server.port + 1)", "127.0.0.1",
            "localhost.evil.example:\(server.port)",
        ] {
            let reply = try server.request("GET", "/", headers: ["Host": host])
            #expect(reply.status == 421, "\(host)")
            #expect(!reply.body.contains("Marcus"))
            expectSecurityHeaders(reply, host)
        }
        for host in ["localhost:\(server.port)", "127.0.0.1:\(server.port)"] {
            #expect(try server.request("GET", "/", headers: ["Host": host]).status == 200, "\(host)")
        }
    }

    @Test func aCrossOriginOrTokenlessPostChangesNothing() throws {
        try setUp()
        let server = try served()
        try server.connect()
        let before = try log()
        let spend = [("kind", "spend"), ("amount", "7.77"), ("what", "gro")]
        #expect(try server.post("/budget/entries", spend, origin: "http://evil.example").status == 403)
        #expect(try server.post("/budget/entries", spend, origin: "http://127.0.0.1:\(server.port + 1)").status == 403)
        #expect(try server.post("/budget/entries", spend, csrf: "").status == 403)
        #expect(try server.post("/budget/entries", spend, csrf: String(repeating: "b", count: 64)).status == 403)
        let body = WebServerUnderTest.encode([("csrf", server.csrf!)] + spend)
        // No Origin, or `null`: only Sec-Fetch-Site: same-origin lets it through.
        #expect(try server.request("POST", "/budget/entries", body: body).status == 403)
        #expect(try server.request("POST", "/budget/entries", headers: ["Origin": "null"], body: body).status == 403)
        #expect(
            try server.request(
                "POST", "/budget/entries", headers: ["Origin": "null", "Sec-Fetch-Site": "same-site"], body: body
            ).status == 403)
        #expect(
            try server.request("POST", "/budget/entries", headers: ["Sec-Fetch-Site": "cross-site"], body: body).status
                == 403)
        #expect(try log() == before)
        // A GET never changes anything, whatever its path and query.
        for path in [
            "/undo", "/lock", "/budget/entries?kind=spend&amount=1&what=gro", "/session?token=\(server.token)",
        ] {
            #expect(try server.get(path).status != 303, "\(path)")
        }
        #expect(
            try server.request("PUT", "/budget/entries", headers: ["Origin": server.origin], body: body).status == 405)
        #expect(try log() == before)
        #expect(try server.get("/").text.contains("Marcus Saver"), "still unlocked")
        // The same form, from the page, is recorded: one change in the log.
        #expect(try server.post("/budget/entries", spend).status == 303)
        #expect(try log().contains("7.77"))
    }

    @Test func everyVaultTextIsEscaped() throws {
        try setUp()
        let hostile = #"<script>alert(1)</script> "q" 'a' &amp; &bogus;"#
        _ = try cli("account", "add", hostile, "--category", #"Cash" onfocus="x"#, "--value", "10")
        _ = try cli("spend", "3", "gro", "--note", #"</td><img src=x onerror=alert(2)>"#)
        let server = try served()
        try server.connect()
        var seen = ""
        for path in ["/", "/assets", "/budget", "/reports", "/search?q=alert", "/search?q=onfocus", "/settings"] {
            let page = try server.get(path).body
            #expect(!page.contains("<script>alert"), "\(path)")
            #expect(!page.contains("<img src=x"), "\(path)")
            // No attribute comes from vault text: a quote never ends one.
            #expect(page.range(of: ##"<[^>]*\sonfocus=""##, options: .regularExpression) == nil, "\(path)")
            seen += page
        }
        #expect(seen.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(seen.contains("&amp;amp; &amp;bogus;"))
        #expect(seen.contains("&lt;img src=x onerror=alert(2)&gt;"))
        #expect(seen.contains(#"value="Cash&quot; onfocus=&quot;x""#))
        // The same text typed into the page's own forms is escaped as well.
        #expect(
            try server.post("/accounts", [("name", "<b>bold</b>"), ("category", "Cash"), ("kind", "asset")]).status
                == 303)
        let page = try server.get("/assets").body
        #expect(!page.contains("<b>bold</b>") && page.contains("&lt;b&gt;bold&lt;/b&gt;"))
    }

    @Test func invoiceTextIsEscapedEverywhereItShows() throws {
        try setUp()
        _ = try cli("client", "add", "<script>alert(3)</script> & Co", "--terms", "14")
        _ = try cli(
            "invoice", "new", "<scr", "--item", #""><img src=x onerror=alert(4)>"#, "1", "100", "--notes",
            #"</pre><script>alert(5)</script>"#, "--send")
        let server = try served()
        try server.connect()
        let list = try server.get("/invoices/list").body
        let id = try #require(list.range(of: "/invoices/[0-9A-F-]{36}", options: .regularExpression).map { list[$0] })
        var seen = ""
        for path in ["/invoices", "/invoices/list", String(id), "/invoices/new"] {
            let page = try server.get(path).body
            #expect(!page.contains("<script>alert"), "\(path)")
            #expect(!page.contains("<img src=x"), "\(path)")
            #expect(page.range(of: ##"<[^>]*\sonerror="##, options: .regularExpression) == nil, "\(path)")
            seen += page
        }
        #expect(seen.contains("&lt;script&gt;alert(3)&lt;/script&gt; &amp; Co"))
        #expect(seen.contains(#""&gt;&lt;img src=x onerror=alert(4)&gt;"#))
        #expect(seen.contains("&lt;/pre&gt;&lt;script&gt;alert(5)&lt;/script&gt;"))
        // The sendable invoice is a download, never a page of this origin, and escaped too.
        let file = try server.get("\(id)/invoice.html")
        #expect(file.status == 200)
        #expect(file.headers["content-disposition"]?.hasPrefix("attachment;") == true)
        expectSecurityHeaders(file, "the invoice download")
        #expect(!file.body.contains("<script>alert") && !file.body.contains("<img src=x"))
    }

    @Test func badInvoiceAndBackupInputIsRefusedAndTheVaultIsAsItWas() throws {
        try setUp()
        _ = try cli("client", "add", "Acme Ltd", "--terms", "14")
        _ = try cli("invoice", "new", "Acme", "--item", "Design", "2", "150", "--send")
        let server = try served()
        try server.connect()
        let list = try server.get("/invoices/list").body
        let id = try #require(list.range(of: "/invoices/[0-9A-F-]{36}", options: .regularExpression).map { list[$0] })
        let form = try server.get("/invoices/new").body
        let client = try #require(
            form.range(of: #"(?<=option value=")[0-9A-F-]{36}"#, options: .regularExpression).map { String(form[$0]) })
        let digest = try storedRowsDigest(sandbox.vault)
        for (fields, what) in [
            ([("amount", "12,3x")], "a malformed amount"), ([("amount", "400")], "more than is owed"),
            ([("amount", "-5")], "a negative amount"),
            ([("amount", "10"), ("into", UUID().uuidString)], "no such account"),
            ([("amount", "10"), ("date", "06/12/2026")], "a date not YYYY-MM-DD"),
        ] {
            let reply = try server.post("\(id)/pay", fields)
            #expect(reply.status == 400, "\(what)")
            #expect(reply.text.contains("Nothing was changed"), "\(what)")
        }
        for (fields, what) in [
            ([("client", UUID().uuidString), ("d1", "Work"), ("q1", "1"), ("p1", "10")], "no such client"),
            ([("client", client), ("d1", "Work"), ("q1", "1"), ("p1", "ten")], "a malformed price"),
            ([("client", client), ("d1", "Work"), ("q1", "lots"), ("p1", "10")], "a malformed quantity"),
            ([("client", client), ("d1", ""), ("p1", "10")], "a price without a description"),
            ([("client", client), ("d1", "Work"), ("p1", "10"), ("tax", "lots")], "a malformed tax rate"),
            ([("d1", "Work")], "a field missing"),
        ] {
            #expect(try server.post("/invoices", fields).status == 400, "\(what)")
        }
        #expect(try server.get("/invoices/\(UUID().uuidString)").status == 404)
        #expect(try server.post("/invoices/\(UUID().uuidString)/pay", []).status == 404)
        #expect(try server.post("/invoices/not-an-id/send", []).status == 404)
        #expect(try server.post("\(id)/send", []).status == 400, "an invoice already sent")
        #expect(try server.post("/backups", []).status == 400, "no backup folder yet")
        #expect(try server.post("/backups/targets", [("path", "relative/dir")]).status == 400)
        #expect(try server.post("/backups/verify", [("file", "/etc/passwd")]).status == 400, "not an archive of ours")
        #expect(try storedRowsDigest(sandbox.vault) == digest)
        // The same forms, well filled, each make one change in the log.
        #expect(try server.post("\(id)/pay", [("amount", "100")]).status == 303)
        #expect(try server.post("\(id)/remind", []).status == 303)
        let log = try log()
        #expect(log.contains("Recorded payment of £100.00") && log.contains("Recorded a reminder"))
        #expect(try cli("invoices", "--json").stdout.contains(#""outstanding" : "200.00""#))
        // A backup, well asked for: its steps were reported as it went, for the page's status line.
        let folder = sandbox.directory.path("usb")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let idle = try JSONDecoder().decode(Steps.self, from: Data(try server.get("/backups/progress").body.utf8))
        #expect(!idle.running && idle.steps.isEmpty)
        #expect(try server.post("/backups/targets", [("path", folder.path)]).status == 303)
        #expect(try server.post("/backups", []).status == 303)
        let progress = try server.get("/backups/progress")
        #expect(progress.headers["content-type"] == "application/json")
        expectSecurityHeaders(progress, "/backups/progress")
        let steps = try JSONDecoder().decode(Steps.self, from: Data(progress.body.utf8))
        #expect(!steps.running && steps.steps.first == "Reading the vault's records", "\(steps)")
        #expect(
            steps.steps.last?.hasPrefix("Reading ") == true
                && steps.steps.last?.hasSuffix("back and verifying it") == true)
        #expect(try server.get("/backups/progress", withCookie: false).status == 401)
    }

    struct Steps: Decodable { let running: Bool, steps: [String] }

    /// Two devices through one folder: the page shows them, syncs, and puts a conflict's lost
    /// value back, each exactly as `coffer sync` and `coffer sync conflicts restore` would.
    @Test func syncNowAndAConflictRestoredFromThePage() throws {
        let folder = sandbox.directory.path("Sync/coffer")
        func device(_ name: String) -> [String: String] {
            environment.merging([
                "COFFER_VAULT": sandbox.directory.path("\(name)/vault.coffer").path,
                "XDG_STATE_HOME": sandbox.directory.path("\(name)/state").path,
            ]) { $1 }
        }
        func run(_ name: String, _ arguments: String...) throws -> RunResult {
            let result = try sandbox.run(arguments, environment: device(name))
            #expect(result.status == 0, "\(name) \(arguments): \(result.stderr)")
            return result
        }
        try FileManager.default.createDirectory(at: sandbox.directory.path("laptop"), withIntermediateDirectories: true)
        _ = try run("laptop", "init", "--kdf", "interactive")
        _ = try run("laptop", "account", "add", "Holiday Fund", "--category", "Savings", "--value", "100")
        _ = try run("laptop", "sync", "init", folder.path, "--name", "laptop")
        _ = try run("desktop", "device", "join", folder.path, "--name", "desktop")
        let server = try served(environment: device("laptop"))
        try server.connect()
        let page = try server.get("/backups").text
        #expect(page.contains("laptop (this device)") && page.contains("desktop"), "both devices listed")
        #expect(page.contains("No conflicts"))

        // The same record renamed on both devices: the page's sync merges and keeps the loser.
        _ = try run("desktop", "account", "rename", "Holiday Fund", "Travel Pot")
        _ = try run("desktop", "sync")
        _ = try run("laptop", "account", "rename", "Holiday Fund", "Trip Fund")
        let synced = try server.post("/sync", [])
        #expect(synced.status == 303)
        let after = try server.get("/backups").text
        #expect(after.contains("from desktop") && after.contains("1 concurrent edit resolved"), "\(after)")
        // What was lost and what was kept, in the page's words (which rename wins is the stamps').
        #expect(
            after.contains("name 'Travel Pot' → kept 'Trip Fund'")
                || after.contains("name 'Trip Fund' → kept 'Travel Pot'"),
            "\(after)")
        let conflicts = try run("laptop", "sync", "conflicts", "--json").stdout
        #expect(conflicts.contains(#""number" : 1"#))
        #expect(try server.post("/sync/conflicts/1/restore", []).status == 303)
        #expect(try run("laptop", "log").stdout.contains("Restored"), "one change in the log")
        #expect(try server.post("/sync/conflicts/1/restore", []).status == 400, "restored once")
        #expect(try server.post("/sync/conflicts/9/restore", []).status == 400)
        #expect(try server.post("/sync", []).status == 303, "publishes the restore")
        _ = try run("desktop", "sync")
        #expect(
            try run("laptop", "export", "json", "--out", "-").stdout
                == run("desktop", "export", "json", "--out", "-").stdout, "both devices converge")
    }

    /// What the CLI asks about before recording (a value ten times off, a future date), the page
    /// asks too: 409, the doubt in the CLI's words, nothing recorded until Record it anyway.
    @Test func anEntryThatIsProbablyASlipIsAskedAboutFirst() throws {
        try setUp()
        let server = try served()
        try server.connect()
        let assets = try server.get("/assets").body
        let account = try #require(
            assets.range(of: "/accounts/[0-9A-F-]{36}", options: .regularExpression).map { String(assets[$0]) })
        let digest = try storedRowsDigest(sandbox.vault)
        let asked = try server.post("\(account)/value", [("amount", "432109"), ("note", "a + b & c")])
        #expect(asked.status == 409)
        let refused = try sandbox.run(["update", "Marcus", "432109"], environment: environment)
        #expect(refused.status == 64, "the CLI without a terminal refuses it too")
        let doubt = "£432,109.00 is more than ten times Marcus Saver's current value (£4,321.09)."
        #expect(asked.text.contains(doubt) && refused.stderr.contains(doubt), "the same words in both faces")
        #expect(asked.body.contains("Record it anyway") && asked.body.contains(#"name="confirm" value="yes""#))
        #expect(asked.body.contains(#"name="note" value="a + b &amp; c""#), "the form as it was typed, to post again")
        #expect(
            try server.post(
                "/budget/entries", [("kind", "spend"), ("amount", "5"), ("what", "gro"), ("date", "2026-12-25")]
            ).status == 409)
        #expect(try storedRowsDigest(sandbox.vault) == digest, "nothing recorded while asking")
        #expect(
            try server.post("\(account)/value", [("amount", "432109"), ("note", "a + b & c"), ("confirm", "yes")])
                .status
                == 303)
        #expect(
            try server.post(
                "/budget/entries",
                [("kind", "spend"), ("amount", "5"), ("what", "gro"), ("date", "2026-12-25"), ("confirm", "yes")]
            ).status == 303)
        let log = try log()
        #expect(log.contains("432,109.00") && log.contains("5.00"))
        #expect(try cli("export", "json", "--out", "-").stdout.contains("a + b & c"))
    }

    /// Pages are read side by side; changes one at a time: concurrent posts all land, each one
    /// entry in the log, and the pages read meanwhile are whole.
    @Test func concurrentRequestsLoseNoChangeAndReadNoHalfOfOne() throws {
        try setUp()
        let server = try served()
        try server.connect()
        let statuses = Mutex([Int]())
        DispatchQueue.concurrentPerform(iterations: 24) { index in
            let status =
                index % 3 == 0
                ? (try? server.post(
                    "/budget/entries", [("kind", "spend"), ("amount", "1.0\(index % 10)"), ("what", "gro")]))?
                    .status
                : (try? server.get(index % 2 == 0 ? "/" : "/budget"))?.status
            statuses.withLock { $0.append(status ?? 0) }
        }
        let seen = statuses.withLock { $0 }
        #expect(seen.filter { $0 == 303 }.count == 8, "\(seen)")
        #expect(seen.filter { $0 == 200 }.count == 16, "\(seen)")
        let log = try log()
        for index in stride(from: 0, to: 24, by: 3) { #expect(log.contains("1.0\(index % 10)"), "spend \(index)") }
        #expect(try cli("verify").status == 0)
    }

    @Test func badInputIsRefusedWithItsStatusAndTheVaultAsItWas() throws {
        try setUp()
        let server = try served()
        try server.connect()
        let digest = try storedRowsDigest(sandbox.vault)
        let malformed = try server.post("/budget/entries", [("kind", "spend"), ("amount", "12,3x"), ("what", "gro")])
        #expect(malformed.status == 400)
        #expect(malformed.text.contains("Not done:") && malformed.text.contains("Nothing was changed"))
        #expect(
            try server.post("/budget/entries", [("kind", "spend"), ("amount", "5"), ("what", "zzz")]).status == 400)
        #expect(
            try server.post("/budget/entries", [("kind", "spend"), ("amount", "5")]).status == 400, "a field missing")
        #expect(try server.get("/accounts/not-an-id").status == 404)
        #expect(try server.get("/accounts/\(UUID().uuidString)").status == 404)
        #expect(try server.post("/accounts/\(UUID().uuidString)/value", [("amount", "5")]).status == 404)
        #expect(try server.get("/?as-of=yesterday").status == 400)
        #expect(try server.get("/budget?month=2026-13").status == 400)
        #expect(try server.get("/nowhere").status == 404)
        #expect(try storedRowsDigest(sandbox.vault) == digest)
        #expect(try server.get("/").status == 200, "still serving")
    }

    @Test func aHugeBodyAndASlowClientLeaveTheServerServing() throws {
        try setUp()
        let server = try served()
        try server.connect()
        let digest = try storedRowsDigest(sandbox.vault)
        // A slow client: headers that never end, a byte at a time.
        let slow = try RawHTTP.connect(port: server.port)
        defer { close(slow) }
        RawHTTP.send(slow, Array("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n".utf8))
        // 100 MB announced and sent: refused (413) long before it is all read.
        let huge = try RawHTTP.connect(port: server.port)
        defer { close(huge) }
        let head =
            "POST /budget/entries HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nCookie: coffer-\(server.port)=\(server.cookie!)\r\n"
            + "Origin: \(server.origin)\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000000\r\n\r\n"
        RawHTTP.send(huge, Array(head.utf8))
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        for _ in 0..<100 {
            RawHTTP.send(slow, [UInt8(ascii: "X")])
            guard RawHTTP.send(huge, chunk) else { break }
        }
        let reply = RawHTTP.parse(RawHTTP.receiveAll(huge))
        #expect(reply?.status == 413)
        // Meanwhile, and after, the server answers everyone else.
        #expect(try server.get("/").status == 200)
        #expect(try storedRowsDigest(sandbox.vault) == digest)
    }

    @Test func unlockInThePageThenLockWipesTheKeys() throws {
        try setUp()
        // No passphrase in the environment: the page asks for it.
        let server = try served(environment: ["COFFER_TODAY": "2026-12-06"])
        try server.connect()
        let locked = try server.get("/")
        #expect(locked.text.contains("Unlock the vault") && !locked.body.contains("Marcus"))
        let csrf = try #require(locked.csrf)
        server.csrf = csrf
        let wrong = try server.post("/unlock", [("passphrase", "not the passphrase")])
        #expect(wrong.status == 403 && wrong.text.contains("does not open this vault"))
        #expect(
            try server.post("/budget/entries", [("kind", "spend"), ("amount", "1"), ("what", "gro")]).status == 423)
        #expect(try server.post("/unlock", [("passphrase", Self.passphrase)]).status == 303)
        #expect(try server.get("/").text.contains("Marcus Saver"))
        // The Lock button: the next page asks again, and holds no data.
        let afterLock = try server.post("/lock", [])
        #expect(afterLock.text.contains("Unlock the vault") && !afterLock.body.contains("Marcus"))
        #expect(!(try server.get("/assets").body.contains("Marcus")))
        #expect(!server.output.contains(Self.passphrase))
    }

    @Test func cofferLockTheTimeoutAndACLIWriteAreSeen() throws {
        try setUp()
        let server = try served()
        try server.connect()
        // A CLI write while the page is open shows on the next request.
        _ = try cli("update", "Marcus", "5000")
        #expect(try server.get("/").text.contains("5,000.00"))
        // A page write lands on the newest vault and is one change in the log, undone by the CLI.
        let id = try #require(
            try server.get("/assets").body.range(of: "/accounts/[0-9A-F-]{36}", options: .regularExpression).map {
                String(try server.get("/assets").body[$0])
            })
        #expect(try server.post("\(id)/value", [("amount", "5100"), ("date", "2026-12-06")]).status == 303)
        #expect(try log().contains("5,100.00"))
        _ = try cli("undo")
        #expect(try server.get(id).text.contains("5,000.00"))
        // `coffer lock` ends the server and its keys.
        _ = try cli("lock")
        #expect(server.exit(within: 10) == 0)
        #expect(server.output.contains("Locked by coffer lock"))

        let idle = try served(["--timeout", "2s"])
        #expect(idle.exit(within: 15) == 0)
        #expect(idle.output.contains("idle timeout"))
    }

    /// The Overview's data is kept while the vault file is unchanged (scripts/bench's
    /// requests per second): every way the file can change under it must still show at once.
    @Test func theKeptOverviewIsNeverStale() throws {
        try setUp()
        let server = try served()
        try server.connect()
        #expect(try server.get("/").text.contains("4,321.09"))
        let before = try Data(contentsOf: sandbox.vault)
        _ = try cli("update", "Marcus", "5000")
        #expect(try server.get("/").text.contains("5,000.00"))
        #expect(try server.get("/").text.contains("5,000.00"))
        // The older copy put back, once the page has shown the newer one: refused, not shown.
        let after = try Data(contentsOf: sandbox.vault)
        try before.write(to: sandbox.vault)
        let rolledBack = try server.get("/")
        #expect(rolledBack.status == 409 && rolledBack.text.contains("rolled back"), "\(rolledBack.status)")
        #expect(!rolledBack.body.contains("4,321.09") && !rolledBack.body.contains("5,000.00"))
        try after.write(to: sandbox.vault)
        #expect(try server.get("/").text.contains("5,000.00"))
        // Another day's overview is its own.
        #expect(try server.get("/?as-of=2026-11-15").text.contains("4,321.09"))
        // Locked: nothing kept is shown, and after unlocking a CLI write in between shows.
        _ = try server.post("/lock", [])
        #expect(!(try server.get("/").body.contains("5,000.00")))
        _ = try cli("update", "Marcus", "6000")
        #expect(try server.post("/unlock", [("passphrase", Self.passphrase)]).status == 303)
        #expect(try server.get("/").text.contains("6,000.00"))
    }

    /// Import rules and profiles from Settings: each change one entry in `coffer log`, the
    /// pattern escaped, a place that matches nothing refused with the vault as it was.
    @Test func importRulesAndProfilesAreKeptFromSettings() throws {
        try setUp()
        let server = try served()
        try server.connect()
        let added = try server.post(
            "/settings/rules", [("set", "Bank"), ("pattern", "<b>TESCO&amp;</b>"), ("place", "groc"), ("field", "any")])
        #expect(added.status == 303)
        let settings = try server.get("/settings")
        #expect(
            settings.body.contains("&lt;b&gt;TESCO&amp;amp;&lt;/b&gt;") && !settings.body.contains("<b>TESCO"),
            "\(settings.body.components(separatedBy: "TESCO").dropFirst().first?.prefix(40) ?? "")")
        #expect(try cli("import", "rules", "show", "Bank").stdout.contains("<b>TESCO&amp;</b>"))
        #expect(try log().contains("Added rule"))
        let before = try log()
        let unknown = try server.post(
            "/settings/rules", [("set", "Bank"), ("pattern", "ALDI"), ("place", "zzz"), ("field", "any")])
        #expect(unknown.status == 400 && unknown.text.contains("Nothing was changed"), "\(unknown.status)")
        let again = try server.post(
            "/settings/rules", [("set", "Bank"), ("pattern", "<b>TESCO&amp;</b>"), ("place", "groc"), ("field", "any")])
        #expect(again.status == 400 && again.text.contains("already has that rule"))
        #expect(try log() == before)
        #expect(try server.post("/settings/rules/remove", [("set", "Bank"), ("rule", "1")]).status == 303)
        #expect(!(try cli("import", "rules", "show", "Bank").stdout.contains("TESCO")))
        _ = try cli("undo")
        #expect(try cli("import", "rules", "show", "Bank").stdout.contains("TESCO"))

        let statement = sandbox.directory.path("bank.csv")
        try "Date,Description,Amount\n2026-12-01,TESCO,-5.00\n".write(to: statement, atomically: true, encoding: .utf8)
        _ = try cli("import", "csv", statement.path, "--into", "transactions", "--save-profile", "MyBank")
        #expect(try server.get("/settings").body.contains("<td>MyBank</td>"))
        #expect(try server.post("/settings/profiles/remove", [("name", "MyBank")]).status == 303)
        #expect(!(try server.get("/settings").body.contains("<td>MyBank</td>")))
        #expect(try log().contains("Removed import profile MyBank"))
    }

    @Test func theExitCodesAsEveryCommand() throws {
        let none = try sandbox.run(["web", "--no-open"], environment: environment)
        #expect(none.status == 66)
        try setUp()
        let wrong = try sandbox.run(["web", "--no-open"], environment: ["COFFER_PASSPHRASE": "wrong passphrase!"])
        #expect(wrong.status == 77)
        let server = try served()
        let taken = try sandbox.run(["web", "--no-open", "--port", "\(server.port)"], environment: environment)
        #expect(taken.status == 64, "\(taken.stderr)")
        #expect(taken.stderr.contains("in use"))
        #expect(try sandbox.run(["web", "--port", "70000"], environment: environment).status == 64)
        #expect(try sandbox.run(["web", "--timeout", "soon"], environment: environment).status == 64)
    }
}

import CofferKit
import FinanceCore
import Foundation
import Hummingbird
import Logging
import NIOCore
import VaultStore

#if canImport(Glibc)
    import Glibc
#endif

/// `coffer web`: serves one vault on loopback to one browser, until Ctrl-C, `coffer lock` (which
/// removes the held-keys marker), or the idle timeout. Specs/web.md is the contract.
public enum WebServer {
    public struct Settings: Sendable {
        public var vaultURL: URL
        public var sessionDirectory: URL
        public var rollbackGuard: RollbackGuard
        /// 0: any free port.
        public var port: Int
        public var openBrowser: Bool
        public var idleTimeout: TimeInterval
        public var keys: HeldKeys?
        public var today: CalendarDate?
        /// The configuration file's backup folders, used beside the vault's saved targets.
        public var configuredBackupTargets: [String]
        /// Written into each archive's signed description.
        public var appVersion: String

        public init(
            vaultURL: URL, sessionDirectory: URL, rollbackGuard: RollbackGuard, port: Int, openBrowser: Bool,
            idleTimeout: TimeInterval, keys: HeldKeys?, today: CalendarDate?, configuredBackupTargets: [String],
            appVersion: String
        ) {
            (self.vaultURL, self.sessionDirectory, self.rollbackGuard) = (vaultURL, sessionDirectory, rollbackGuard)
            (self.port, self.openBrowser, self.idleTimeout) = (port, openBrowser, idleTimeout)
            (self.keys, self.today) = (keys, today)
            (self.configuredBackupTargets, self.appVersion) = (configuredBackupTargets, appVersion)
        }
    }

    /// Why the server ended, as `coffer web` says it on stderr.
    enum Ending: Sendable {
        case interrupted, lockedElsewhere, idle

        var words: String {
            switch self {
            case .interrupted: "Stopped"
            case .lockedElsewhere: "Locked by coffer lock"
            case .idle: "Locked after the idle timeout"
            }
        }
    }

    /// Serves until the end; throws when the vault cannot be read or the port is taken.
    public static func serve(_ settings: Settings) throws {
        let vaultID = try Vault.summary(at: settings.vaultURL).vaultID
        let marker = try HeldKeysMarker.create(vaultID: vaultID, directory: settings.sessionDirectory)
        defer { marker.remove() }
        let state = WebState(settings: settings, marker: marker)
        defer { state.wipe() }
        let signals = SignalWatch()
        let result = ResultBox<Ending>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                result.value = .success(try await run(state, signals: signals))
            } catch {
                result.value = .failure(error)
            }
            done.signal()
        }
        done.wait()
        let ending = try result.value!.get()
        FileHandle.standardError.write(Data("\(ending.words): the keys were wiped from memory.\n".utf8))
    }

    private static func run(_ state: WebState, signals: SignalWatch) async throws -> Ending {
        let (ports, portFound) = AsyncStream<Int>.makeStream()
        let requested = state.settings.port
        let ipv4 = application(state, host: "127.0.0.1", port: requested) { portFound.yield($0) }
        return try await withThrowingTaskGroup(of: Ending?.self) { group in
            group.addTask {
                do {
                    try await ipv4.run()
                } catch let error as IOError where error.errnoCode == EADDRINUSE || error.errnoCode == EACCES {
                    throw CofferError(
                        .invalidInput,
                        error.errnoCode == EADDRINUSE
                            ? "Port \(requested) on 127.0.0.1 is in use." : "Port \(requested) may not be used.")
                }
                return nil
            }
            group.addTask {
                var found: Int?
                for await port in ports {
                    found = port
                    break
                }
                guard let port = found else { return nil }
                state.port = port
                // ::1 too, on the same port; a machine without IPv6 loopback serves 127.0.0.1 only.
                let ipv6 = application(state, host: "::1", port: port) { _ in }
                let served = Task { try? await ipv6.run() }
                defer { served.cancel() }
                announce(state)
                return await watch(state, signals: signals)
            }
            defer { group.cancelAll() }
            while let finished = try await group.next() {
                if let ending = finished { return ending }
            }
            return .interrupted
        }
    }

    private static func application(
        _ state: WebState, host: String, port: Int, running: @escaping @Sendable (Int) -> Void
    ) -> some ApplicationProtocol {
        var logger = Logger(label: "coffer-web")
        logger.logLevel = .critical  // nothing about requests reaches a log: paths carry record ids
        return Application(
            router: WebRoutes.router(state),
            // A connection idle for 30 s is closed: a slow client holds one connection, no more.
            server: .http1(configuration: .init(idleTimeout: .seconds(30))),
            configuration: .init(address: .hostname(host, port: port), serverName: nil, reuseAddress: false),
            onServerRunning: { channel in running(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    /// Prints the address with its one-time token, and opens it unless told not to: through a
    /// private file that redirects to it, so the token never appears in another process's
    /// arguments (as Jupyter does).
    private static func announce(_ state: WebState) {
        let address = "http://127.0.0.1:\(state.port)/#token=\(state.launchToken)"
        FileHandle.standardOutput.write(Data("Open \(address)\n".utf8))
        FileHandle.standardError.write(
            Data("Serving on this computer only. Ctrl-C or `coffer lock` ends it and wipes the keys.\n".utf8))
        guard state.settings.openBrowser else { return }
        do {
            let opener = try state.writeOpener(address)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["xdg-open", opener.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        } catch {
            FileHandle.standardError.write(Data("Could not open a browser: open the address above in one.\n".utf8))
        }
    }

    /// Until Ctrl-C, the marker's removal (`coffer lock`) or the idle timeout.
    private static func watch(_ state: WebState, signals: SignalWatch) async -> Ending {
        while !Task.isCancelled {
            if signals.received { return .interrupted }
            if !state.marker.isPresent { return .lockedElsewhere }
            if state.idleFor >= state.settings.idleTimeout { return .idle }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return .interrupted
    }
}

/// SIGINT and SIGTERM end the server gracefully (the keys wiped, the marker removed).
private final class SignalWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var sources: [DispatchSourceSignal] = []
    private var seen = false

    init() {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.lock.withLock { self?.seen = true } }
            source.resume()
            sources.append(source)
        }
    }

    var received: Bool { lock.withLock { seen } }
}

private final class ResultBox<Value: Sendable>: @unchecked Sendable {
    var value: Result<Value, Error>?
}

import CofferCLI
import CofferWeb

// The two faces meet only here: `coffer web` is parsed by the CLI and served by the web face.
Web.serve = { launch in
    try WebServer.serve(
        .init(
            vaultURL: launch.vaultURL, sessionDirectory: launch.sessionDirectory, rollbackGuard: launch.rollbackGuard,
            port: launch.port, openBrowser: launch.openBrowser, idleTimeout: launch.idleTimeout, keys: launch.keys,
            today: launch.today, configuredBackupTargets: launch.configuredBackupTargets,
            appVersion: launch.appVersion))
}
Coffer.runAndExit()

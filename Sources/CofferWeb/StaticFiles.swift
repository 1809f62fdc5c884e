import Hummingbird

/// The style sheet and the one script, served by Coffer itself from /static/ (the policy
/// allows nothing else: no inline script or style, no other host). Kept in the binary, so an
/// installed `coffer` needs no resource folder beside it.
enum StaticFiles {
    static func response(_ text: String, type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "\(type); charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A coffer's outline, so the browser's request for an icon finds one.
    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect x="1" y="4" width="14" height="10" rx="2" \
        fill="#1f4fbf"/><rect x="5" y="2" width="6" height="3" rx="1" fill="#1f4fbf"/></svg>

        """

    /// Connects this browser: the one-time token arrives in the address's fragment
    /// (#token=...), which no server and no log sees. It is posted once, then cleared from the
    /// address bar and the history, so it is neither bookmarked nor reused.
    static let connectScript = """
        (function () {
          var match = /^#token=([0-9a-f]{64})$/.exec(window.location.hash);
          if (!match) { return; }
          history.replaceState(null, "", window.location.pathname);
          var form = document.getElementById("connect");
          form.elements.token.value = match[1];
          form.submit();
        })();

        """

    /// While a slow form is sent (a backup, a full verification), its button says so and cannot
    /// be pressed twice; a form with `data-progress` shows the step the server is at in its
    /// status line (read aloud by screen readers). Without script the form works the same, silently.
    static let busyScript = """
        document.addEventListener("submit", function (event) {
          var form = event.target, words = form.getAttribute("data-busy");
          if (!words) { return; }
          var button = form.querySelector("button[type=submit]");
          if (button) { button.disabled = true; button.textContent = words; }
          form.setAttribute("aria-busy", "true");
          var source = form.getAttribute("data-progress"), line = form.querySelector("[role=status]");
          if (!source || !line) { return; }
          var poll = function () {
            fetch(source, { credentials: "same-origin", cache: "no-store" })
              .then(function (reply) { return reply.ok ? reply.json() : null; })
              .then(function (progress) {
                if (progress && progress.running && progress.steps.length) {
                  line.textContent = progress.steps[progress.steps.length - 1] + "…";
                }
              })
              .catch(function () {})
              .then(function () { setTimeout(poll, 400); });
          };
          setTimeout(poll, 200);
        });

        """

    /// Seed 003's rules: contrast at least 4.5:1 in both schemes, a visible focus ring, text
    /// that grows with the browser's setting (rem), one column at phone width.
    static let styleSheet = """
        :root { --bg: #ffffff; --fg: #1b1b1f; --muted: #4a4a55; --line: #d0d0d8; --card: #f4f4f7;
          --accent: #1f4fbf; --accent-fg: #ffffff; --good: #17643a; --bad: #a4161a; --bar: #3d6fd9;
          --focus: #b35c00; color-scheme: light dark; }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #121216; --fg: #ececf1; --muted: #b8b8c4; --line: #3a3a46; --card: #1d1d24;
            --accent: #8fb0ff; --accent-fg: #0d0d12; --good: #7ad69b; --bad: #ff9a9a; --bar: #7d9ff0;
            --focus: #ffb35c; } }
        * { box-sizing: border-box; }
        html { font-size: 100%; }
        body { margin: 0; background: var(--bg); color: var(--fg); line-height: 1.5;
          font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
        a { color: var(--accent); }
        :focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
        .skip { position: absolute; left: -999rem; }
        .skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: 0.5rem; z-index: 2; }
        .top { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1rem; padding: 0.5rem 1rem;
          border-bottom: 1px solid var(--line); }
        .brand { font-weight: 700; margin: 0; }
        nav ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; list-style: none; margin: 0; padding: 0; }
        nav a { display: inline-block; padding: 0.25rem 0; }
        nav a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
        .lock { margin-left: auto; }
        main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
        h1 { font-size: 1.6rem; margin: 0.5rem 0; }
        h2 { font-size: 1.25rem; margin: 1.5rem 0 0.5rem; }
        .hero { background: var(--card); border-radius: 0.5rem; padding: 1rem; }
        .hero .figure { font-size: 2.2rem; font-weight: 700; margin: 0; font-variant-numeric: tabular-nums; }
        .muted, .hint { color: var(--muted); }
        .hint { margin: 0; font-size: 0.9rem; }
        .up { color: var(--good); } .down { color: var(--bad); }
        .banner { border: 2px solid var(--line); border-radius: 0.5rem; padding: 0.5rem 1rem; margin: 0 0 1rem;
          display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; }
        .banner p { margin: 0; }
        .banner.done { border-color: var(--good); }
        .banner.problem { border-color: var(--bad); }
        table { border-collapse: collapse; width: 100%; margin: 0.5rem 0 1rem; font-variant-numeric: tabular-nums; }
        caption { text-align: left; font-weight: 600; padding-bottom: 0.25rem; }
        th, td { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        td.amount, th.amount { text-align: right; white-space: nowrap; }
        form { margin: 0.5rem 0; }
        .field { margin: 0 0 0.75rem; }
        .field label { display: block; font-weight: 600; }
        input, select, button { font: inherit; }
        input, select { padding: 0.4rem; border: 1px solid var(--muted); border-radius: 0.25rem; background: var(--bg);
          color: var(--fg); width: 100%; max-width: 24rem; }
        fieldset { border: 1px solid var(--line); border-radius: 0.5rem; margin: 0 0 0.75rem; min-width: 0; }
        fieldset label { display: inline; font-weight: 400; margin-right: 1rem; }
        fieldset input { width: auto; }
        button { padding: 0.45rem 1rem; border-radius: 0.25rem; border: 2px solid var(--accent); cursor: pointer;
          background: var(--accent); color: var(--accent-fg); font-weight: 600; }
        button.secondary { background: transparent; color: var(--accent); }
        .inline { display: inline-flex; flex-wrap: wrap; gap: 0.5rem; align-items: end; }
        .tabs { display: flex; flex-wrap: wrap; gap: 0.5rem; list-style: none; padding: 0; }
        .tabs a { display: inline-block; padding: 0.3rem 0.8rem; border: 1px solid var(--line); border-radius: 1rem; }
        .tabs a[aria-current="page"] { border: 2px solid var(--accent); font-weight: 700; }
        figure { margin: 0.5rem 0; }
        svg { max-width: 100%; height: auto; }
        svg text { fill: var(--fg); font-size: 13px; }
        svg .bar { fill: var(--bar); }
        svg .line { fill: none; stroke: var(--bar); stroke-width: 2; }
        svg .area { fill: var(--bar); opacity: 0.15; }
        svg .axis { fill: none; stroke: var(--muted); }
        figcaption { color: var(--muted); font-size: 0.9rem; }
        .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 1rem; }
        .card { background: var(--card); border-radius: 0.5rem; padding: 0.75rem 1rem; }
        .card h2 { margin-top: 0; }
        .card .figure { font-size: 1.5rem; font-weight: 700; margin: 0; font-variant-numeric: tabular-nums; }
        .chip { display: inline-block; padding: 0 0.5rem; border: 1px solid var(--line); border-radius: 1rem;
          white-space: nowrap; }
        .chip.overdue { border: 2px solid var(--bad); font-weight: 700; }
        .chip.paid { border-color: var(--good); }
        .field input[type="checkbox"] { width: auto; }
        .field label.check { display: inline; font-weight: 400; }
        pre.message { white-space: pre-wrap; overflow-wrap: anywhere; font: inherit; background: var(--card);
          border-radius: 0.5rem; padding: 0.75rem 1rem; }
        .note { white-space: pre-wrap; }
        .wide { overflow-x: auto; margin: 0.5rem 0 1rem; }
        .wide table { margin: 0; width: auto; min-width: 100%; }
        .wide th, .wide td { white-space: nowrap; overflow-wrap: normal; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%);
          white-space: nowrap; }
        button:disabled { opacity: 0.75; cursor: progress; }
        @media (max-width: 30rem) { main { padding: 0.75rem 0.5rem; } .hero .figure { font-size: 1.8rem; }
          th, td { padding: 0.3rem 0.2rem; overflow-wrap: anywhere; } td.amount, th.amount { overflow-wrap: normal; }
          table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
          table.stack tr { display: block; border-bottom: 1px solid var(--line); padding: 0.4rem 0; }
          table.stack td { display: block; border: 0; }
          .chart { overflow-x: auto; } .chart svg { width: 40rem; max-width: none; } }
        .file { font-size: 0.9rem; overflow-wrap: anywhere; }

        """
}

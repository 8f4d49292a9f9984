"""The scanner for inline Node (Deno, Bun), Perl, Ruby, PHP, awk, Lua, R, Julia and PowerShell code (see
``shell.inline``): a lexer turns literals into tokens, then each language's calls that act
(``_RULES``: a kind -> the call names that do it) are matched on the result. Kinds: ``cmd`` and
``run`` (a command line), ``argv``/``spawn``/``list`` (a program and its arguments; ``cmd``,
``argv`` and ``list`` in Node only where ``child_process`` is named), ``del``, ``rm`` (a tree when
``recursive`` is given), ``destroy``, ``write``, ``move``, ``copy``, ``open``, ``net``, ``pkg``
(installs packages), ``eval`` (a literal is read as code), ``unknown``. ``re`` is
imported only when there is code to scan.
"""

from __future__ import annotations

from governance.shell.finding import LABEL, MAX_DEPTH, Finding, apply, file, run_cmd, words
from governance.shell.words import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.finding import Item

_LEX = {  # the constructs opening literals and comments; interpolation in non-plain quotes; block end
    "node": (r"(?P<bc>/\*)|(?P<lc>//)|(?P<q>['\"`])|(?P<re>/)", r"\$\{", "*/"),
    "perl": (r"(?P<lc>(?<![$\\])#)|(?P<q>['\"`])|(?P<re>/)|(?P<ql>(?<![\w$@%&>:-])(?:q[qxwr]?|m|s|tr|y)"
             r"(?=[/|!#{(\[<'\"~^%:@+]))", r"(?<!\\)[$@][\w{:$]", ""),
    "ruby": (r"(?P<bc>^=begin\b)|(?P<lc>#)|(?P<q>['\"]|(?<!:)`)|(?P<re>/)|(?P<ql>(?<![\w)\]}])%[qQwWiIxs]?"
             r"(?=[^\w\s]))", r"(?<!\\)#[{@$]", "\n=end"),
    "php": (r"(?P<bc>/\*)|(?P<lc>//|#)|(?P<q>['\"`])", r"(?<!\\)\$[\w{]|\{\$", "*/"),
    "awk": (r"(?P<lc>#)|(?P<q>\")|(?P<re>/)", "", ""),
    "lua": (r"(?P<long>(?:--)?\[=*\[)|(?P<lc>--)|(?P<q>['\"])", "", ""),
    "r": (r"(?P<lc>#)|(?P<q>['\"])", "", ""),
    "julia": (r"(?P<bc>#=)|(?P<lc>#)|(?P<q>[\"`])", r"(?<!\\)\$[\w(]", "=#"),
    "powershell": (r"(?P<bc><#)|(?P<lc>#)|(?P<q>['\"])", r"(?<!`)\$[\w{(:]", "#>"),
}
_OPS = {  # a quote: p plain (no interpolation), x a command, w a word list, r a pattern (no value)
    "'": "p", "`": "x", "q": "p", "qx": "x", "qw": "pw", "qr": "r", "m": "r", "s": "r", "tr": "r", "y": "r",
    "/": "r", "%q": "p", "%x": "x", "%w": "pw", "%W": "w", "%i": "pw", "%I": "w", "%s": "p"}
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_PREFIX = {"<P>": r"(?<![\w$@%&>:])", "<R>": r"(?<![\w.:@$])", "<H>": r"(?<![\w$>:])"}
_RULES = {  # kind pattern: a match ends where the call's arguments start
    "node": r"""cmd (?<![\w$])(?:execSync|exec)(?=\s*\()
argv (?<![\w$])(?:spawnSync|spawn|execFileSync|execFile)(?=\s*\()
eval (?<![\w$.])(?:eval|Function)(?=\s*\()|\bvm\.(?:runIn\w*Context|compileFunction|Script)\b
require (?<![\w$.])(?:require|import)(?=\s*\()|\b(?:from|import)(?=\s*\x00)
unknown \bprocess\.(?:binding|dlopen|_linkedBinding)\b
cpref (?<![\w$])(?:execSync|exec|spawnSync|spawn|execFileSync|execFile)\b(?!\s*[(,}])
cpref \[[^\[\]\n]*\]\s*(?=\()
net (?<![\w$])fetch(?=\s*\()|\bXMLHttpRequest\b|\bWebSocket\b
net \b(?:https?|http2|net|tls|dgram)\.(?:get|request|connect|createConnection|createSocket)\b
write (?<![\w$])(?:writeFileSync|appendFileSync|createWriteStream|truncateSync|mkdirSync|chmodSync)\b
write \.(?:writeFile|appendFile|truncate|mkdir|chmod)\b
move (?<![\w$])renameSync\b|\.rename\b
chdir \bprocess\.chdir(?=\s*\()
copy (?<![\w$])(?:copyFileSync|cpSync|symlinkSync|linkSync)\b|\.(?:copyFile|cp|symlink)\b
rm (?<![\w$])(?:unlinkSync|rmdirSync|rmSync)\b|\.(?:unlink|rmdir|rm)\b
destroy (?<![\w$.])rimraf(?:\.sync)?(?=\s*\()
open (?<![\w$])openSync\b|\bfs\.open\b
run \bBun\.\$(?=\s*\x00)|(?<![\w$.])\$(?=\x00)
spawn \bBun\.spawn(?:Sync)?(?=\s*\()|\bDeno\.run(?=\s*\()
denocmd \bnew\s+Deno\.Command(?=\s*\()
unknown \bDeno\.(?:dlopen|openPlugin)\b
rm \bDeno\.remove(?:Sync)?\b
write \bDeno\.(?:writeTextFile|writeFile|mkdir|truncate|chmod|create|open)(?:Sync)?\b|\bBun\.write\b
move \bDeno\.rename(?:Sync)?\b
copy \bDeno\.(?:copyFile|symlink|link)(?:Sync)?\b
net \bDeno\.(?:connect|connectTls|resolveDns)\b""",
    "perl": r"""list <P>(?:CORE::)?(?:system|exec)\b(?!\s*(?:=>|\}))
cmd <P>readpipe\b
perlopen <P>open\b
eval <P>eval\b(?!\s*\{)
dels <P>(?:unlink|rmdir)\b
destroy <P>(?:File::Path::)?(?:rmtree|remove_tree)\b
move <P>(?:File::Copy::)?(?:move|mv)\b|<P>rename\b
chdir <P>chdir\b
copy <P>(?:File::Copy::)?(?:copy|cp)\b|<P>(?:symlink|link)\b
write <P>(?:mkdir|truncate)\b
net \b(?:LWP|HTTP::Tiny|IO::Socket|Net::(?:HTTP|FTP|SMTP|Ping|SSH2?|Telnet|POP3|IMAP\w*)|Socket)\b
net \b(?:Mojo::UserAgent|WWW::Mechanize)\b|<P>socket(?=\s*\()
pkg \bCPAN::(?:Shell->)?(?:install|force)\b|\bApp::cpanminus\b""",
    "ruby": r"""list (?:\b(?:Kernel|Process)\.|<R>)(?:system|exec|spawn)\b(?![?!:])
cmd \bIO\.popen\b
list \bPTY\.spawn\b|\bOpen3\.\w+
pipe (?:\bKernel\.|<R>)open\b|\bIO\.(?:read|readlines|foreach|write|binread)\b
open (?:\bKernel\.|<R>)open\b|\bFile\.(?:open|new)\b
eval (?:(?<![\w:@$])(?:instance_eval|class_eval|module_eval)|<R>eval)\b(?!\s*(?:\{|do\b))
unknown \b(?:__send__|public_send|send|method)\s*\(?\s*:(?:system|exec|spawn|eval|popen|open|`)
destroy \bFileUtils\.(?:rm_rf|rm_r|rmtree|remove_dir|remove_entry(?:_secure)?)\b
destroy (?<![\w.:])[A-Z]\w*(?:::[A-Z]\w*)*\.(?:all\.)?(?:destroy_all|delete_all)\b(?![?!=])
del \b(?:File|Dir)\.(?:delete|unlink|rmdir)\b|\bFileUtils\.(?:rm|rm_f|rmdir|remove|remove_file)\b
write \b(?:File|IO)\.(?:write|binwrite)\b|\bFileUtils\.(?:touch|mkdir_p|mkdir|makedirs)\b|\bDir\.mkdir\b
move \bFile\.rename\b|\bFileUtils\.(?:mv|move)\b
chdir \bDir\.chdir\b|\bFileUtils\.(?:cd|chdir)\b
copy \bFileUtils\.(?:cp|copy|cp_r|ln|ln_s|ln_sf|install|copy_file)\b|\bFile\.(?:symlink|link)\b
net \b(?:Net::(?:HTTP|FTP|SMTP|Telnet|SSH|POP3|IMAP)|URI\.open|TCPSocket|UDPSocket|Socket)\b
net \b(?:HTTParty|Faraday|RestClient|Excon|Typhoeus)\b
require <R>require\b
pkg \bGem\.install\b|\bGem::(?:DependencyInstaller|Installer)\b|\bBundler::CLI\b""",
    "php": r"""cmd <H>(?:system|exec|shell_exec|passthru|popen|proc_open)(?=\s*\()
argv <H>pcntl_exec(?=\s*\()
eval <H>(?:eval|assert)(?=\s*\()
unknown <H>create_function(?=\s*\()
phpcall <H>(?:call_user_func(?:_array)?|forward_static_call(?:_array)?|array_map|array_walk|usort)(?=\s*\()
phpcall <H>register_shutdown_function(?=\s*\()
phpvar \$\w+(?=\s*\()
net <H>(?:curl_init|curl_exec|fsockopen|pfsockopen|stream_socket_client|socket_connect)(?=\s*\()
net <H>(?:ftp_connect|ftp_ssl_connect|mail|get_headers|dns_get_record)(?=\s*\()
url <H>(?:file_get_contents|fopen|file|readfile|copy|simplexml_load_file)(?=\s*\()
del <H>(?:unlink|rmdir)(?=\s*\()
phprec \bRecursiveDirectoryIterator\b
write <H>(?:file_put_contents|touch|mkdir|chmod|chown|chgrp)(?=\s*\()
open <H>fopen(?=\s*\()
move <H>rename(?=\s*\()
chdir <H>chdir(?=\s*\()
copy <H>(?:copy|symlink|link)(?=\s*\()""",
    "awk": r"""cmd (?<![\w$])system(?=\s*\()""",
    "lua": r"""cmd \b(?:os\.execute|io\.popen)\b
del \bos\.remove\b
move \bos\.rename\b
chdir \blfs\.chdir\b
open \bio\.open\b
eval (?<![\w.:])(?:loadstring|load)\b
unknown (?<![\w.:])(?:dofile|loadfile)\b|\bpackage\.loadlib\b|\bffi\.C\b|\b(?:os|io)\s*\[
require (?<![\w.:])require\b
net \b(?:socket\.(?:http|tcp|udp|connect|dns)|http\.request|ssl\.https)\b""",
    "r": r"""run (?<![\w.])(?:base::)?(?:system|shell|pipe)(?=\s*\()
spawn (?<![\w.])(?:base::)?system2(?=\s*\()
spawn \b(?:processx::run|sys::exec_wait|sys::exec_internal|sys::exec_background)(?=\s*\()
rm (?<![\w.])(?:base::)?unlink(?=\s*\()
del (?<![\w.])(?:base::)?file\.remove(?=\s*\()|\bfs::file_delete(?=\s*\()
destroy \bfs::dir_delete(?=\s*\()
write (?<![\w.])(?:file\.create|dir\.create|Sys\.chmod)(?=\s*\()|\bfs::(?:file_create|dir_create)(?=\s*\()
move (?<![\w.])file\.rename(?=\s*\()|\bfs::file_move(?=\s*\()
chdir (?<![\w.])(?:base::)?setwd(?=\s*\()
copy (?<![\w.])(?:file\.copy|file\.symlink|file\.link)(?=\s*\()|\bfs::file_copy(?=\s*\()
net (?<![\w.])(?:utils::)?(?:download\.file|url|socketConnection)(?=\s*\()|\b(?:curl|httr2?|RCurl|crul)::\w+
net (?<![\w.:])(?:GET|POST|PUT|PATCH|DELETE|HEAD|VERB|getURL|curl_download|curl_fetch_memory)(?=\s*\()
url (?<![\w.])(?:source|read\.csv|read\.table|read\.delim|readLines|readRDS|load)(?=\s*\()
url (?<![\w.])(?:fromJSON|read_csv|fread)(?=\s*\()
eval (?<![\w.])(?:base::)?evalq?\s*\(\s*(?:base::)?(?:parse|str2lang|str2expression)\s*\(\s*(?:text\s*=\s*)?
rcall (?<![\w.])(?:do\.call|Recall)(?=\s*\()
rget (?<![\w.])(?:match\.fun|get|getFunction)(?=\s*\()
unknown (?<![\w.])(?:dyn\.load|\.Call|\.External|\.Internal|\.Primitive)(?=\s*\()
pkg (?<![\w.])(?:utils::)?(?:install\.packages|update\.packages|remove\.packages)(?=\s*\()
pkg \b(?:remotes|devtools)::(?:install_\w+|update_packages)
pkg (?<![\w.:])install_(?:github|gitlab|cran|url|local|version|deps)(?=\s*\()
pkg \b(?:BiocManager::install|pak::(?:pkg_install|pak|local_install))\b
pkg \brenv::(?:install|restore|update|hydrate)\b""",
    "julia": r"""argv (?<![\w.])Cmd(?=\s*\()
jrun (?<![\w.])(?:run|success|readchomp|pipeline|Base\.run)(?=\s*\()
rm (?<![\w.])(?:Base\.)?(?:Filesystem\.)?rm(?=\s*\()
write (?<![\w.])(?:touch|mkdir|mkpath|chmod|chown)(?=\s*\()
wpath (?<![\w.])write(?=\s*\()
open (?<![\w.])open(?=\s*\()
move (?<![\w.])mv(?=\s*\()
copy (?<![\w.])(?:cp|symlink|hardlink)(?=\s*\()
net (?<![\w.])(?:Downloads\.)?(?:download|request)(?=\s*\()|\bHTTP\.\w+|\bSockets\.connect\b
eval (?<![\w.])(?:Core\.)?eval\s*\(\s*(?:Main\s*,\s*)?(?:Meta\.parse|Base\.parse_input_line)\s*\(
eval (?<![\w.])include_string\s*\(\s*(?:Main\s*,\s*)?
unknown (?<![\w.])(?:ccall|@ccall|Libdl\.dlopen)\b|(?<![\w.])(?:Core\.)?eval\s*\(\s*(?!\s*:)[\w.]+\s*\)
pkg \bPkg\.(?:add|develop|dev|update|up|rm|remove|instantiate|build|precompile|resolve)\b
pkg (?<![\w.])pkg(?=\x00)""",
    "powershell": r"""net (?i)(?<![\w-])Start-BitsTransfer\b
net (?i)\b(?:Net\.WebClient|Net\.Http\.HttpClient|Net\.Sockets)\b|\.Download(?:String|File|Data)\b
eval (?i)(?<![\w-])(?:Invoke-Expression|iex)\b
unknown (?i)\[ScriptBlock\]::Create\b|\bFromBase64String\b|(?<![\w-])Add-Type\b|(?<![\w-])Invoke-Command\b
unknown (?i)(?<![\w-])(?:Start-Process|saps)\b|&\s*\$\w+
destroy (?i)(?<![\w-])(?:Remove-Item|ri|del|erase|rd|rmdir)\b(?=[^;\n|]*\s-r)
del (?i)(?<![\w-])(?:Remove-Item|ri)\b
write (?i)(?<![\w-])(?:Set-Content|Add-Content|Out-File|New-Item|Copy-Item|Move-Item|Rename-Item)\b
pkg (?i)(?<![\w-])(?:Install-Module|Install-Package|Install-Script|Update-Module|Install-PSResource)\b
destroy (?i)(?<![\w-])(?:Stop-Computer|Restart-Computer|Format-Volume|Clear-Disk)\b
destroy (?i)(?<![\w-])(?:Initialize-Disk|Remove-Partition|Clear-RecycleBin)\b"""}
_NET_MODULES = words("http https http2 net tls dgram axios node-fetch undici got request ws superagent "
                      "needle open-uri net/http net/https net/ftp net/smtp socket httparty faraday "
                      "rest-client excon socket.http ssl.https http.request copas.http")
_R_SHELL = words("system system2 shell pipe unlink file.remove eval evalq parse source")
_PHP_SHELL = words("system exec shell_exec passthru popen proc_open pcntl_exec")


def findings(lang: str, code: str, depth: int = 0) -> list[Finding]:
    """What ``lang`` code does beyond computing; ``depth`` counts code evaluated by code."""
    if depth > MAX_DEPTH:
        return [Finding("shell-unknown", f"the {LABEL[lang]} code nests evaluated code too deeply")]
    try:
        return _scan(lang, code, depth)
    except RecursionError:
        return [Finding("shell-unknown", f"the {LABEL[lang]} code is nested too deeply to read")]


def _scan(lang: str, code: str, depth: int) -> list[Finding]:
    import re

    text, lits = _lex(lang, code)
    label, out = LABEL[lang], list[Finding]()
    gate = lang != "node" or "child_process" in text or any(v and "child_process" in v for v in lits)
    closures = set(re.findall(r"(\$\w+)\s*=\s*(?:static\s+)?(?:function|fn)\b", text))
    for line in _RULES[lang].splitlines():
        kind, pattern = line.split(" ", 1)
        for key, prefix in _PREFIX.items():
            pattern = pattern.replace(key, prefix)
        for m in re.finditer(pattern, text, re.M):
            items, end = _items(text, m.end(), lits)
            first = items[0] if items else None
            if kind == "require":
                plain = re.fullmatch(r"[\s(]*\x00\d+\x00[\s)]*", text[m.end():end] + ")")
                kind_ = "unknown" if not isinstance(first, str) or not plain else \
                    "net" if first.removeprefix("node:") in _NET_MODULES else ""
            elif kind == "phpcall":           # call_user_func('system', ..)
                kind_ = "unknown" if first in _PHP_SHELL else ""
            elif kind == "rcall":             # do.call("system", ..), do.call(f, ..)
                kind_ = "unknown" if first is None or first in _R_SHELL else ""
            elif kind == "rget":              # get("system")(..); get(x) is a value
                kind_ = "unknown" if first in _R_SHELL else ""
            elif kind == "jrun":              # run(`cmd`) runs a literal command; run(x) is unknown
                kind_ = "" if "\x01" in text[m.end():end] or "Cmd" in text[m.end():end] else "unknown"
            elif kind == "denocmd":           # new Deno.Command("git", {args: ["push"]})
                listed = re.search(r"\bargs\s*:\s*(\[[^\[\]]*\])", text[m.end():end])
                kind_, items = "argv", [first, _item(listed.group(1), lits) if listed else []]
                if listed is None and re.search(r"\bargs\b", text[m.end():end]):
                    items = [first, [None]]
            elif kind == "spawn" and len(items) > 1 and not isinstance(items[1], list):
                kind_, items = "argv", [first, [items[1]]]          # R: system2("git", "push")
            elif kind == "wpath":             # write("f", x) writes f; write(io, x) an open stream
                kind_ = "write" if isinstance(first, str) else ""
            elif kind == "phpvar":            # $f(..): unknown unless $f = function/fn
                kind_ = "" if m.group() in closures else "unknown"
            elif kind == "rm":
                kind_ = "destroy" if "recursive" in text[m.end():end] else "del"
            elif kind == "cmd" and lang == "awk" and not isinstance(first, str):
                built = _awk_string(text[m.end():end], lits)   # system("curl " ENVIRON["T"])
                kind_ = "cmd" if built is not None else "unknown"
                if built is not None:
                    items = [built]
            elif kind == "url":           # a URL, or an expression that starts with one
                lead = re.match(r"[\s(]*\x00(\d+)\x00", text[m.end():end])
                url = first if isinstance(first, str) else (
                    lits[int(lead.group(1))] if lead is not None else None)
                kind_ = "net" if str(url).lower().startswith(("http:", "https:", "ftp:", "ftps:")) \
                    else ""
            elif kind == "phprec":
                kind_ = "destroy" if re.search(_PREFIX["<H>"] + r"(?:unlink|rmdir)\s*\(", text) else ""
                items = []
            elif kind == "pipe":              # open("|cmd")
                kind_, items = ("cmd" if str(first).startswith("|") else ""), [str(first)[1:]]
            elif kind == "perlopen":
                kind_, items = _perl_open(items)
            else:
                kind_ = "" if kind in ("cmd", "argv", "list", "cpref") and not gate else \
                    "unknown" if kind == "cpref" else {"run": "cmd", "spawn": "argv"}.get(kind, kind)
            apply(out, kind_, items, f"the {label} code calls {m.group().strip()}",
                  lambda code: findings(lang, code, depth + 1))
    for m in re.finditer(r"\x01(\d+)\x01", text):
        run_cmd(out, lits[int(m.group(1))], f"the {label} code runs a command in backticks")
    if lang == "awk":
        _awk(out, text, lits)
    if lang == "powershell":
        _external(out, text, lits)
        _cmdlets(out, text, lits)
    return out


# PowerShell's file cmdlets and their aliases -> the Bash command that does the same to the files
_PS_FILES = {**dict.fromkeys(("remove-item", "ri", "rm", "del", "erase", "rd", "rmdir"), "rm"),
             **dict.fromkeys(("set-content", "sc", "add-content", "ac", "out-file", "clear-content",
                              "clc", "new-item", "ni", "tee-object", "tee", "set-item", "si"),
                             "touch"),
             **dict.fromkeys(("copy-item", "cpi", "copy", "cp"), "cp"),
             **dict.fromkeys(("move-item", "mi", "move", "mv"), "mv"),
             **dict.fromkeys(("rename-item", "rni", "ren"), "ren"),
             **dict.fromkeys(("get-content", "gc", "cat", "type"), "cat"),
             **dict.fromkeys(("invoke-webrequest", "iwr", "invoke-restmethod", "irm"), "curl"),
             "expand-archive": "unzip"}
# PowerShell's aliases that are no program of this machine: not run as one (``_external``)
_PS_ALIASES = frozenset(name for name in _PS_FILES if name not in ("rm", "rmdir", "cp", "mv",
                                                                     "tee", "cat", "type")) | \
    words("iex icm gci gi gp gcm gal gps gsv sal sl select where foreach sort measure ft fl fw "
          "ogv sleep write echo % ? dir ls")
# parameters that name a path, and others that take a value (abbreviations are read as
# PowerShell reads them: any unambiguous prefix)
_PS_PATHS = ("path", "literalpath", "filepath", "destination", "destinationpath", "newname",
             "name", "pspath", "lp")
_PS_VALUED = (*_PS_PATHS, "value", "itemtype", "type", "encoding", "filter", "include", "exclude",
              "credential", "stream", "inputobject", "width", "delimiter", "target", "uri",
              "infile", "outfile", "method", "body", "headers", "contenttype", "totalcount",
              "tail", "readcount", "form", "useragent", "timeoutsec", "proxy", "session",
              "websession", "sessionvariable")
_PS_SWITCHES = ("recurse", "force", "whatif", "confirm", "nonewline", "append", "passthru",
                "noclobber", "container", "usetransaction", "asbytestream", "wait", "fromsession",
                "tosession")


def _cmdlets(out: list[Finding], text: str, lits: list[str | None]) -> None:
    """PowerShell's file and web cmdlets (``Remove-Item``, ``Set-Content``, ``Copy-Item``,
    ``Move-Item``, ``Rename-Item``, ``New-Item``, ``Out-File``, ``Get-Content``,
    ``Invoke-WebRequest`` ... and their aliases) and redirections to a file, each as the Bash
    command that does the same to the same paths and hosts (``rm -r``, ``touch``, ``cp -r``,
    ``mv``, ``cat``, ``curl``), so they are decided as Bash's are; ``-WhatIf`` only prints. A
    path or URL known only at run time (a variable, a pipe's input) stands as ``$__inline``."""
    import re

    def value(word: str) -> str | None:
        found = re.fullmatch(r"\x00(\d+)\x00", word)
        if found:
            return lits[int(found[1])]
        return None if "$" in word or "\x00" in word else word

    redirect = r"[*\d]?>>?\s*(\x00\d+\x00|[^\s>&]+)"
    for pipeline in re.split(r"[;\n{}()]", text):
        piped: list[str | None] = [None]     # what a pipe hands on: known only at run time
        for statement in pipeline.split("|"):
            for m in re.finditer(redirect, statement):
                if not m[1].startswith("$null"):     # > FILE, >> FILE, 2> FILE, *> FILE
                    run_cmd(out, "touch -- " + _quoted(value(m[1])),
                            "the PowerShell code redirects output to a file")
            words_ = re.sub(redirect, " ", statement).split()
            name = words_[0].lower() if words_ else ""
            named, positional, switches = _ps_arguments([value(w) if w[:1] != "-" else w
                                                         for w in words_[1:]])
            program = _PS_FILES.get(name)
            if program is not None and "whatif" not in switches:
                run_cmd(out, _ps_line(program, named, positional, switches, piped),
                        f"the PowerShell code calls {words_[0]}")
            listed = [*named.get("path", ()), *named.get("literalpath", ()), *positional]
            piped = [None] if name not in _PS_LISTERS else \
                [None if p is None else p.rstrip("/") + "/*" if _PS_LISTERS[name] else p
                 for p in listed or ["."]]        # Get-ChildItem .claude | Remove-Item


def _quoted(item: str | None) -> str:
    return '"$__inline"' if item is None else quote(item)


def _ps_arguments(words_: list[str | None]) -> tuple[dict[str, list[str | None]],
                                                     list[str | None], set[str]]:
    """A cmdlet's arguments as PowerShell binds them: named parameters (``-Path X``,
    ``-Path:X``, any unambiguous prefix), switches, and positional values (``a,b`` is two)."""
    named: dict[str, list[str | None]] = {}
    positional: list[str | None] = []
    switches: set[str] = set()
    k = 0
    while k < len(words_):
        word = words_[k]
        k += 1
        if word is None or not (word.startswith("-") and len(word) > 1 and word[1].isalpha()):
            positional += [word] if word is None else [p for p in word.split(",") if p]
            continue
        name, colon, attached = word[1:].partition(":")
        name = name.lower()
        switch = next((s for s in _PS_SWITCHES if s.startswith(name)), None)
        valued = next((v for v in _PS_VALUED if v.startswith(name)), None)
        if valued is not None and (switch is None or valued == name):
            if colon:
                named.setdefault(valued, []).append(attached)
            elif k < len(words_):
                named.setdefault(valued, []).append(words_[k])
                k += 1
        elif switch is not None and not (colon and attached.lower() == "$false"):
            switches.add(switch)
    return named, positional, switches


# cmdlets whose output a pipe hands on as items: True when they are a folder's children
_PS_LISTERS = {**dict.fromkeys(("get-childitem", "gci", "ls", "dir"), True),
               **dict.fromkeys(("get-item", "gi"), False)}


def _ps_line(program: str, named: dict[str, list[str | None]], positional: list[str | None],
             switches: set[str], piped: list[str | None]) -> str:
    """The Bash command that does what a file or web cmdlet does (``_cmdlets``); ``piped``: the
    paths a pipe hands it (None: known only at run time)."""
    paths = [p for key in ("path", "literalpath", "lp", "pspath", "filepath")
             for p in named.get(key, ())]
    if program in ("rm", "cat"):
        paths = [*paths, *positional] or piped
        flags = "-r -f " if program == "rm" and "recurse" in switches else \
            "-f " if program == "rm" else ""
        return f"{program} {flags}-- " + " ".join(_quoted(p) for p in paths)
    if program == "touch":
        paths = paths or positional[:1] or piped
        names = named.get("name", ())
        if names:                                    # New-Item -Path DIR -Name FILE
            paths = [None if p is None or n is None else f"{p}/{n}" for p in paths for n in names]
        return "touch -- " + " ".join(_quoted(p) for p in paths)
    if program == "unzip":
        where = [*named.get("destinationpath", ()), *positional[1:2]] or ["."]
        archive = [*paths, *positional][:1] or [None]
        return f"unzip -o -d {_quoted(where[0])} -- {_quoted(archive[0])}"
    if program == "curl":
        parts = ["curl"]
        for option, name in (("-X", "method"), ("--data-binary", "infile"), ("-o", "outfile"),
                             ("-d", "body")):
            for item in named.get(name, ()):
                if item is not None and name == "infile":
                    item = f"@{item}"
                parts += [option, _quoted(item)]
        url = [*named.get("uri", ()), *positional][:1] or [None]
        return " ".join([*parts, "--", _quoted(url[0])])
    sources = [*paths, *positional] or list(piped)  # cp, mv, ren
    targets = [*named.get("destination", ()), *named.get("newname", ())]
    if not targets:
        targets = [sources.pop()] if len(sources) > 1 else [None]
    if program == "ren":                             # Rename-Item PATH NAME: NAME in PATH's folder
        first, new = sources[0], targets[0]
        folder = None if first is None else first.rpartition("/")[0]
        if new is not None and folder and "/" not in new:
            targets = [f"{folder}/{new}"]
    command = {"cp": "cp -r", "mv": "mv", "ren": "mv"}[program]
    return f"{command} -- " + " ".join(_quoted(p) for p in [*sources, targets[0]])


# cmdlet verbs that only read or print (Get-, Test-, Select-, Write-Output ...); a cmdlet of
# another verb that governance does not read is shell-unlisted
_PS_READ_VERBS = words("get test select measure format write out where foreach sort group "
                       "convertto convertfrom compare resolve split join find read show")
_PS_WORDS = words("if else elseif foreach for while do until switch function filter param return try "
                  "catch finally throw exit break continue begin process end class using trap data")


def _external(out: list[Finding], text: str, lits: list[str | None]) -> None:
    """PowerShell runs a program named by a plain word as it is (``git push``): each statement that
    starts with one (not a cmdlet's Verb-Noun, a variable or a keyword) is a shell command."""
    import re

    for statement in re.split(r"[;\n|{}()]", text):
        statement = re.sub(r"^\s*[&.]\s+(?=\S)", "", statement)   # & CMD, . ./lib.ps1
        first = statement.split(None, 1)[0] if statement.strip() else ""
        literal = re.fullmatch(r"\x00(\d+)\x00", first)
        script = lits[int(literal[1])] if literal else first
        if script is not None and script.lower().endswith(".ps1"):   # ./deploy.ps1: its text
            rest = re.sub(r"\x00(\d+)\x00", lambda m: _quoted(lits[int(m[1])]),
                          statement.strip()[len(first):])
            run_cmd(out, "pwsh -NoProfile -File " + _quoted(script) + rest,
                    "the PowerShell code runs a script")
            continue
        verb, dash, noun = first.lower().partition("-")
        if dash and verb.isalpha() and noun.isalpha() and verb not in _PS_READ_VERBS and \
                first.lower() not in _PS_FILES:   # Stop-Service, Set-ExecutionPolicy ...
            out.append(Finding("shell-unlisted", f"the PowerShell code calls {first}"))
            continue
        if not first or not re.fullmatch(r"[\w./]+", first) or first.lower() in _PS_WORDS or \
                first.lower() in _PS_ALIASES:
            continue
        line = re.sub(r"\x00(\d+)\x00", lambda m: "'" + (lits[int(m[1])] or "$__inline").replace(
            "'", "'\\''") + "'", statement.strip())
        if "$" not in line.split(None, 1)[0]:
            run_cmd(out, line, "the PowerShell code runs a program")


def _perl_open(items: list[Item]) -> tuple[str, list[Item]]:
    """open(F, MODE, TARGET, ...) or open(F, EXPR): the kind and arguments of what it does."""
    mode = items[1] if len(items) > 1 else ""
    if not isinstance(mode, str):
        return "unknown", []
    if len(items) > 2:
        writes = mode.strip()[:1] in (">", "+")
        return ("list", items[2:]) if "|" in mode else ("write", items[2:3]) if writes else ("", [])
    spec = mode.strip()
    if spec[:1] == "|" or (spec[-1:] == "|" and spec not in ("-|", "|-")):
        return "cmd", [spec.strip("|").strip()]
    writes = spec[:1] == ">" or spec[:2] in ("+<", "+>")
    return ("write", [spec.lstrip("+<>").strip()]) if writes else ("", [])


def _awk(out: list[Finding], text: str, lits: list[str | None]) -> None:
    import re

    for m in re.finditer(r"(?<!\|)\|&?\s*getline\b", text):    # "cmd" | getline: a literal operand
        before = text[max(0, m.start() - 99):m.start()].rstrip()
        tok = re.search(r"\x00(\d+)\x00$", before)
        literal = tok and not re.search(r"[\w$)\]\x00]\s*$", before[:tok.start()])
        run_cmd(out, lits[int(tok.group(1))] if tok and literal else None,
                 "the awk program reads the output of a command")
    for m in re.finditer(r"(?<![\w$])printf?\b", text):        # print ... | "cmd", print ... > "file"
        statement, depth = re.split(r"[;\n}]", text[m.end():m.end() + 500], maxsplit=1)[0], 0
        for j, c in enumerate(statement):
            depth += (c in "([") - (c in ")]")
            if depth == 0 and c in "|>" and "|" not in (statement[j + 1:j + 2], statement[j - 1:j]):
                value = _value(statement[j + 1:].lstrip(">&"), lits)
                if c == ">":
                    file(out, "write", value, "the awk program writes to a file")
                elif not (value or "").startswith("/inet"):
                    run_cmd(out, value, "the awk program pipes its output to a command")
                    if value is not None and _shell_reader(value):   # print "CMD" | "sh"
                        run_cmd(out, _value(statement[:j], lits),
                                "the awk program prints commands to a shell")
                break
    if any(v and "/inet" in v for v in lits):
        out.append(Finding("web-fetch", "the awk program opens a network connection (/inet)"))


def _lex(lang: str, code: str) -> tuple[str, list[str | None]]:
    """``code`` without comments, each literal replaced by ``\\0N\\0`` (a command by ``\\1N\\1``, a
    word list by ``[\\0N\\0,...]``), and the literals' values (None: run-time)."""
    import re

    opener, interp, block_end = _LEX[lang]
    out, lits, last, i = list[str](), list[str | None](), "", 0

    def token(value: str | None, flags: str) -> str:
        if "w" in flags:
            return "[" + ",".join(token(w, "") for w in (value or "").split()) + "]"
        lits.append(value)
        mark = "\x01" if "x" in flags and lang != "node" else "\x00"
        return f"{mark}{len(lits) - 1}{mark}"

    while (m := re.compile(opener, re.M).search(code, i)) is not None:
        chunk, kind, op, i = code[i:m.start()], m.lastgroup, m.group(), m.end()
        out.append(chunk)
        last = chunk.rstrip()[-1:] or last
        if kind in ("bc", "lc"):
            j = code.find(block_end if kind == "bc" else "\n", i)
            i = len(code) if j < 0 else j + (len(block_end) if kind == "bc" else 0)
        elif kind == "long":                  # Lua [[...]], [==[...]==], --[[ comment ]]
            close = "]" + "=" * op.count("=") + "]"
            j = code.find(close, i) % (len(code) + 1)
            out.append("" if op[0] == "-" else token(code[i:j], "p"))
            i = j + len(close)
        elif kind == "re" and not (last in "(,=:;!&|?{}[~+-*%<>^" or re.search(
                r"(?<![\w$])(?:split|grep|if|unless|and|or|not|return|when|while|map)\s*$",
                code[max(0, m.start() - 12):m.start()])):
            out.append(op)                    # a division, not a pattern
            last = op
            continue
        else:
            delim, i = (code[i:i + 1], i + 1) if kind == "ql" else (op, i)
            raw, i = _delimited(code, i, delim)
            if op in ("s", "tr", "y"):        # s/a/b/flags, s{a}{b}flags
                if delim in _PAIRS:
                    i = len(code) - len(code[i:].lstrip())
                    delim, i = code[i:i + 1], i + 1
                second, i = _delimited(code, i, delim)
                modifiers = re.match(r"[a-z]*", code[i:])
                if op == "s" and modifiers and "e" in modifiers.group():    # s/../code/e runs the code
                    code = code[:i] + ";" + second + ";" + code[i + modifiers.end():]
            flags = _OPS.get(op, "")
            live = "p" not in flags and interp and re.search(interp, raw)
            out.append(token(None if "r" in flags or live else _unescape(raw, "p" in flags), flags))
        last = "\x00"
    out.append(code[i:])
    return "".join(out), lits


def _delimited(code: str, i: int, delim: str) -> tuple[str, int]:
    """The text from ``i`` to the closing ``delim`` (nesting when it is a bracket), and the end."""
    close, depth, j = _PAIRS.get(delim, delim), 0, i
    while j < len(code):
        c = code[j]
        if c == close and depth == 0:
            return code[i:j], j + 1
        depth += (c == delim and close != delim) - (c == close)
        j += 2 if c == "\\" else 1
    return code[i:], len(code)


def _unescape(raw: str, plain: bool) -> str:
    import re

    if plain or "\\" not in raw:
        return raw.replace("\\\\", "\\").replace("\\'", "'")
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m[1], m[1]), raw, flags=re.S)


def _awk_string(args: str, lits: list[str | None]) -> str | None:
    """The command an awk ``system(...)`` runs, when its argument is a concatenation that starts
    with a literal: the literals as they are, ``ENVIRON["NAME"]`` as ``${NAME}`` (the variable
    it reads), anything else a value known only at run time. None when no literal leads."""
    import re

    inner = args.strip()
    if inner.startswith("("):
        inner = inner[1:]
    if inner.endswith(")"):
        inner = inner[:-1]
    parts: list[str] = []
    pos = 0
    token = re.compile(r"\s*(?:\x00(\d+)\x00|ENVIRON\[\s*\x00(\d+)\x00\s*\]|([^\s\x00]+))")
    while pos < len(inner):
        m = token.match(inner, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
        if m.group(1) is not None:
            parts.append(str(lits[int(m.group(1))] or ""))
        elif m.group(2) is not None and (lits[int(m.group(2))] or "").isidentifier():
            parts.append("${" + str(lits[int(m.group(2))]) + "}")
        else:
            parts.append('"$__input"')
    if not parts or not inner.lstrip().startswith("\x00"):
        return None
    return "".join(parts)


def _items(text: str, i: int, lits: list[str | None]) -> tuple[list[Item], int]:
    """The arguments of the call whose name ends at ``i`` (literal, None or a list), and their end."""
    import re

    i = len(text) - len(text[i:].lstrip(" \t"))
    paren = text.startswith("(", i)
    stop = None if paren else re.compile(r"[;\n}]|\s(?:or|and|if|unless|then|do)\b|\|\||&&").search(text, i)
    items: list[Item] = []
    n, depth, start = min(stop.start() if stop else len(text), i + 500), 0, i + paren
    j = start
    while j < n and (depth or text[j] not in ")]}"):
        depth += (text[j] in "([{") - (text[j] in ")]}")
        if text[j] == "," and depth == 0:
            items.append(_item(text[start:j], lits))
            start = j + 1
        j += 1
    if text[start:j].strip() or items:
        items.append(_item(text[start:j], lits))
    return items, j


def _item(raw: str, lits: list[str | None]) -> Item:
    s = raw.split(";", 1)[0].strip()         # Julia: f(x; keyword=...)
    if s[:2] == "c(" and s[-1:] == ")":      # R: c("a", "b") is a vector
        s = "[" + s[2:-1] + "]"
    return [_value(p, lits) for p in s[1:-1].split(",") if p.strip()] if s[:1] == "[" and s[-1:] == "]" \
        else _value(s, lits)


_SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"))


def _shell_reader(command: str) -> bool:
    """Whether a command reads a shell script on its input (``sh``, ``/bin/bash -s``)."""
    words = command.split()
    return bool(words) and words[0].rsplit("/", 1)[-1] in _SHELLS and all(
        w in ("-s", "-", "sh", "-e", "-x", "-ex", "-xe") for w in words[1:])


def _value(raw: str, lits: list[str | None]) -> str | None:
    s = raw.strip()
    if len(s) > 2 and s[0] == s[-1] == "\x00" and s[1:-1].isdigit():
        return lits[int(s[1:-1])]
    if "\x00" not in s:
        return None
    return _folded(s, lits)


def _folded(s: str, lits: list[str | None]) -> str | None:
    """A path built from literals only: ``"a" + "b"``, Lua's ``..``, Perl's and PHP's ``.``,
    ``["a", "b"].join("/")``, ``path.join("a", "b")``, ``File.join``, ``path.resolve``."""
    import re

    def literal(part: str) -> str | None:
        part = part.strip()
        return lits[int(part[1:-1])] if len(part) > 2 and part[0] == part[-1] == "\x00" and \
            part[1:-1].isdigit() else None

    for op in ("..", "+", "."):
        pieces = s.split(op)
        if len(pieces) > 1:
            values = [literal(p) for p in pieces]
            if all(v is not None for v in values):
                return "".join(str(v) for v in values)
    joined = re.fullmatch(r"\[(.*)\]\s*\.join\(\s*(\x00\d+\x00)?\s*\)", s, re.S)
    if joined:
        values = [literal(p) for p in joined.group(1).split(",") if p.strip()]
        sep = literal(joined.group(2)) if joined.group(2) else ","
        return None if any(v is None for v in values) or sep is None else \
            str(sep).join(str(v) for v in values)
    called = re.fullmatch(r"[\w$.:]*\b(?:join|resolve)\s*\((.*)\)", s, re.S)
    if called:
        values = [literal(p) for p in called.group(1).split(",") if p.strip()]
        if values and all(v is not None for v in values):
            out = ""
            for v in values:
                out = str(v) if str(v).startswith("/") or not out else out.rstrip("/") + "/" + str(v)
            return out
    return None

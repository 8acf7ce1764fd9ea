#!/usr/bin/python3
"""test/drift.py - the checks of test/drift (the documentation against the tree).

Run through test/drift, which parses its options and documents what each
check does: python3 test/drift.py REPO all|selftest.
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

REPO, MODE = sys.argv[1], sys.argv[2]

DOC_GLOBS = ['README.md', 'docs/*.md', 'tools/README.md', 'test/lab/README.md',
             'test/linux-patch/*/README*', 'test/xen-patch/*/README*',
             'test/linux-patch/*/*.patch', 'test/xen-patch/*/*.patch']
SCRIPTS = ['test/lab/run', 'test/check', 'tools/ab-run', 'tools/upr-ab', 'tools/conc-ab',
           'tools/guest-bench', 'tools/lab-ab.sh', 'tools/req-cost', 'tools/zap-profile',
           'tools/lab-targets', 'tools/xen-ptswap']
# Other names a document calls a script by: the tools package's wrapper, and the
# status command (by its subcommand: a bare "xen-ptswap" is the project's name).
ALIASES = {'xen-ptswap-ab-run': 'tools/ab-run', 'xen-ptswap status': 'tools/xen-ptswap'}
NO_BARE_NAME = {'tools/xen-ptswap'}
# Documents with statistics examples that are not Markdown (checked by "stats" only).
EXAMPLE_GLOBS = ['tools/*_example.txt']
# Documents a user reads: no tracker labels ("issue 23") in them.
USER_DOCS = ['README.md', 'docs/*.md', 'tools/README.md']
HISTORY = 'docs/history.md'
NUMWORDS = {w: i + 1 for i, w in enumerate(
    'one two three four five six seven eight nine ten eleven twelve'.split())}
PARTIAL = set('first last other these those remaining more fewer further extra '
              'additional new next previous earlier later following preceding '
              'than'.split())
MD_PREFIXES = ('module/', 'include/', 'test/', 'tools/', 'docs/', 'mk/', '../')
MD_TOPFILES = {'Kbuild', 'dkms.conf', 'Makefile', 'README.md', 'LICENSE'}
SERIES_PREFIXES = ('test/', 'tools/', 'module/', '../')
FOREIGN = re.compile(r'^(include/(linux|asm|asm-generic|uapi|xen|public|trace|net|'
                     r'generated|acpi|crypto|kunit|vdso)/|tools/(testing|perf|objtool|'
                     r'lib|include|arch|build|scripts|bpf|power)/)')
PLACEHOLDER_WORDS = ('VERSION', 'VER', 'NAME', 'SUITE', 'KERNEL', 'BENCH',
                     'VARIANT', 'MODE', 'DIR', 'FILE', 'KEY', 'X.Y')
LONGOPT = re.compile(r'(?<![\w-])--[A-Za-z][\w-]*')


# ---- the tree: series, make targets, the scripts' options

def series_folders():
    out = {}
    for tree in ('linux', 'xen'):
        for d in sorted(glob.glob(os.path.join(REPO, 'test', tree + '-patch', '*'))):
            ver = os.path.basename(d)
            if os.path.isdir(d) and re.fullmatch(r'\d+\.\d+', ver):
                out[(tree, ver)] = len(glob.glob(os.path.join(d, '*.patch')))
    return out


SERIES = series_folders()
VERSIONS = {}
for (_t, _v) in SERIES:
    VERSIONS.setdefault(_v, set()).add(_t)


def folder(key):
    return 'test/%s-patch/%s/' % key


def make_targets(mkfile, seen=None):
    seen = set() if seen is None else seen
    targets = set()
    if mkfile in seen or not os.path.isfile(mkfile):
        return targets
    seen.add(mkfile)
    with open(mkfile, errors='replace') as f:
        text = f.read().replace('\\\n', ' ')
    for line in text.split('\n'):
        if line.startswith('\t') or line.lstrip().startswith('#'):
            continue
        m = re.match(r'\s*-?include\s+(.*)', line)
        if m:
            for inc in m.group(1).split():
                for p in glob.glob(os.path.join(REPO, inc)):
                    targets |= make_targets(p, seen)
            continue
        m = re.match(r'([^:#=]+?)\s*::?(?!=)', line)
        if m:
            targets |= {t for t in m.group(1).split()
                        if not t.startswith('.') and '$' not in t and '%' not in t}
    return targets


TOP_TARGETS = make_targets(os.path.join(REPO, 'Makefile'))


def has_help(path):
    """From the source: does the script handle -h or --help?"""
    with open(path, errors='replace') as f:
        src = f.read()
    if src.startswith('#!') and 'python' in src.split('\n', 1)[0]:
        return 'argparse' in src or bool(re.search(r'["\'](-h|--help)["\']', src))
    if re.search(r'(^|[\s(|])(-h|--help)([|)])', src, re.M):
        return True
    m = re.search(r'getopts\s+["\']?:?([\w:]+)', src)
    return bool(m and 'h' in m.group(1))


def header_text(path):
    """The usage a script states in its header: its leading comment block,
    or a Python script's module docstring."""
    out = []
    with open(path, errors='replace') as f:
        src = f.read()
    if src.startswith('#!') and 'python' in src.split('\n', 1)[0]:
        m = re.match(r'(?:#[^\n]*\n|\s)*("""|\'\'\')(.*?)\1', src, re.S)
        if m:
            return m.group(2)
    with open(path, errors='replace') as f:
        for i, line in enumerate(f):
            if i == 0 and line.startswith('#!'):
                continue
            if not line.startswith('#'):
                break
            out.append(re.sub(r'^# ?', '', line.rstrip('\n')))
    return '\n'.join(out)


def usage_options(text):
    """Long options of the usage synopsis alone ("usage:" and its
    continuation lines): the options a complete list must have."""
    lines = text.split('\n')
    for i, line in enumerate(lines):
        if re.search(r'\busage:', line, re.I):
            opts = set(LONGOPT.findall(line))
            for cont in lines[i + 1:]:
                if not re.match(r'\s*(\[|-- )', cont):
                    break
                opts |= set(LONGOPT.findall(cont))
            return opts
    return set()


def parse_options(text):
    """Long options on the usage lines ("usage:" and the lines after it that
    start with "[" or "--") and the first one starting each option line."""
    opts = set()
    lines = text.split('\n')
    for i, line in enumerate(lines):
        if re.search(r'\busage:', line, re.I):
            opts |= set(LONGOPT.findall(line))
            for cont in lines[i + 1:]:
                if not re.match(r'\s*(\[|-- )', cont):
                    break
                opts |= set(LONGOPT.findall(cont))
            break
    for line in lines:
        m = re.match(r'\s*(?:-\w(?: \S+)?,\s*)?(--[A-Za-z][\w-]*(?:/--[A-Za-z][\w-]*)*)', line)
        if m:
            opts |= set(m.group(1).split('/'))
    return opts


HELP = {}       # script: the usage text its options were read from


def script_options():
    """{script: options}, and findings about scripts whose -h fails."""
    accepted, problems = {}, []
    for s in SCRIPTS:
        path = os.path.join(REPO, s)
        if not os.path.isfile(path):
            continue
        if not has_help(path):
            HELP[s] = header_text(path)
            accepted[s] = parse_options(HELP[s])
            continue
        try:
            p = subprocess.Popen([path, '-h'], cwd=REPO, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 start_new_session=True)
            try:
                out, err = p.communicate(timeout=10)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, err = p.communicate()
                rc = 'a timeout (10 s)'
        except OSError as e:
            out, err, rc = b'', str(e).encode(), 'an error (%s)' % e
        text = out.decode(errors='replace')
        if rc != 0:
            how = rc if isinstance(rc, str) else 'status %d' % rc
            problems.append((s, 1, '`%s -h` ended with %s instead of printing its usage '
                             'and exiting 0' % (s, how)))
            text = header_text(path) + '\n' + text + err.decode(errors='replace')
        HELP[s] = text
        accepted[s] = parse_options(text)
        with open(path, errors='replace') as f:
            if re.search(r'(^|[\s(|])--help[|)]', f.read(), re.M):
                accepted[s].add('--help')
    return accepted, problems


# ---- documents

class Doc:
    def __init__(self, root, rel):
        self.rel = rel
        with open(os.path.join(root, rel), errors='replace') as f:
            lines = f.read().split('\n')
        m = re.match(r'test/(linux|xen)-patch/(\d+\.\d+)/', rel)
        self.own = (m.group(1), m.group(2)) if m else None
        if rel.endswith('.patch'):
            self.kind = 'patch'
            if '---' in lines:
                lines = lines[:lines.index('---')]
        elif self.own or re.match(r'test/(linux|xen)-patch/', rel):
            self.kind = 'series'
        else:
            self.kind = 'md'
        self.lines = lines
        self.code = [False] * len(lines)
        if self.kind == 'md':
            fence = False
            for i, line in enumerate(lines):
                if re.match(r'\s*(```|~~~)', line):
                    fence = not fence
                    self.code[i] = True
                elif fence:
                    self.code[i] = True
                elif re.match(r'( {4}|\t)', line) and line.strip() and (
                        i == 0 or not lines[i - 1].strip() or self.code[i - 1]):
                    self.code[i] = True


def doc_list(root, globs=None):
    rels = []
    for g in DOC_GLOBS if globs is None else globs:
        for p in sorted(glob.glob(os.path.join(root, g))):
            rel = os.path.relpath(p, root)
            if os.path.isfile(p) and rel not in rels:
                rels.append(rel)
    return rels


def load_docs(root):
    return [Doc(root, rel) for rel in doc_list(root)]


class Text:
    """A string whose characters know their line (1-based) and column."""
    def __init__(self):
        self.s, self.pos = '', []

    def add(self, text, line, col):
        self.s += text
        self.pos += [(line, col + i) for i in range(len(text))]

    def sep(self, line):
        self.s += ' '
        self.pos.append((line, -1))

    def at(self, i):
        return self.pos[min(i, len(self.pos) - 1)]


def spans(doc):
    """Code of a document: backtick spans (across lines, not past a blank
    one) and, in Markdown, whole code lines."""
    out, cur = [], None
    for i, line in enumerate(doc.lines):
        n = i + 1
        if doc.code[i]:
            t = Text()
            t.add(line, n, 0)
            out.append(t)
            cur = None
            continue
        if not line.strip():
            cur = None
            continue
        if cur is not None:
            cur.sep(n)
        start = 0
        while True:
            j = line.find('`', start)
            if cur is None:
                if j < 0:
                    break
                cur = Text()
                start = j + 1
                continue
            if j < 0:
                cur.add(line[start:], n, start)
                break
            cur.add(line[start:j], n, start)
            out.append(cur)
            cur = None
            start = j + 1
    return out


def units(doc):
    """Sentences (a table row or a heading is one) as Text objects."""
    out, para = [], []

    def flush():
        if not para:
            return
        t = Text()
        for k, (n, line) in enumerate(para):
            if k:
                t.sep(n)
            t.add(line, n, 0)
        para.clear()
        start = 0
        for m in re.finditer(r'[.!?]["\')\]]*\s+(?=[A-Z0-9`"\'(\[*])', t.s):
            if re.search(r'(\be\.g|\bi\.e|\bcf|\bvs|\bapprox|\bno)\.$', t.s[:m.start() + 1], re.I):
                continue
            out.append((t, start, m.end()))
            start = m.end()
        out.append((t, start, len(t.s)))

    for i, line in enumerate(doc.lines):
        s = line.strip()
        single = doc.kind == 'md' and (s.startswith('|') or s.startswith('#'))
        if not s or doc.code[i] or single or re.match(r'\s*([-*+]|\d+\.)\s', line):
            flush()
        if doc.code[i] or not s:
            continue
        para.append((i + 1, line))
        if single:
            flush()
    flush()
    return out


def words(t):
    for m in re.finditer(r'\S+', t.s):
        yield m.group(0), m.start()


# ---- counts

MENTION_RES = [
    ('folder', re.compile(r'test/(linux|xen)-patch/(\d+\.\d+)(?!\d)')),
    ('named', re.compile(r'\b(Linux|Xen)\s+(\d+\.\d+)(?!\d)')),
    ('src', re.compile(r'\blinux-source-(\d+\.\d+)(?!\d)')),
    ('bare', re.compile(r'(?<![\w.])(\d+\.\d+)(?!\d)')),
]
COUNT_RE = re.compile(r'\b(\d+|%s)\s+patches\b' % '|'.join(NUMWORDS), re.I)
# "`test/linux-patch/6.12/` (7)", in a sentence that says "N patches" too
SHORT_COUNT_RE = re.compile(r'test/(linux|xen)-patch/(\d+\.\d+)/?`?\s*\((\d+)\)')


def mentions(s, a, b):
    found = []
    for kind, rx in MENTION_RES:
        for m in rx.finditer(s, a, b):
            if any(m.start() < e and st < m.end() for st, e, _ in found):
                continue
            if kind in ('folder', 'named'):
                key = (m.group(1).lower(), m.group(2))
            elif kind == 'src':
                key = ('linux', m.group(1))
            else:
                trees = VERSIONS.get(m.group(1), set())
                if len(trees) != 1:
                    continue
                key = (next(iter(trees)), m.group(1))
            found.append((m.start(), m.end(), key))
    return found


def check_counts(docs):
    findings, items = [], []
    for doc in docs:
        for t, a, b in units(doc):
            ms = mentions(t.s, a, b)
            for c in COUNT_RE.finditer(t.s, a, b):
                before = t.s[a:c.start()].split()
                if before and before[-1].lower().strip('(*') in PARTIAL:
                    continue
                prev = [m for m in ms if m[1] <= c.start()]
                key = None
                if prev:
                    key = max(prev, key=lambda m: m[1])[2]
                else:
                    nxt = [m for m in ms if m[0] >= c.end()]
                    if nxt:
                        m = min(nxt)
                        if re.fullmatch(r'\s+(against|for|of|on|in|from|to)\b[^.;:()]{0,60}',
                                        t.s[c.end():m[0]]):
                            key = m[2]
                    if key is None:
                        key = doc.own
                if key not in SERIES:
                    continue
                word = c.group(1)
                n = int(word) if word.isdigit() else NUMWORDS[word.lower()]
                line, col = t.at(c.start())
                ok = n == SERIES[key]
                items.append((doc.rel, line, col, word, str(SERIES[key] + 1), ok))
                if not ok:
                    findings.append((doc.rel, line, '"%s patches" for %s, which has %d'
                                     % (word, folder(key), SERIES[key])))
            if not COUNT_RE.search(t.s, a, b):
                continue
            for c in SHORT_COUNT_RE.finditer(t.s, a, b):
                key = (c.group(1), c.group(2))
                if key not in SERIES:
                    continue
                line, col = t.at(c.start(3))
                ok = int(c.group(3)) == SERIES[key]
                items.append((doc.rel, line, col, c.group(3), str(SERIES[key] + 1), ok))
                if not ok:
                    findings.append((doc.rel, line, '"(%s)" for %s, which has %d patches'
                                     % (c.group(3), folder(key), SERIES[key])))
        if doc.kind == 'patch' and doc.own in SERIES:
            for i, line in enumerate(doc.lines):
                m = re.match(r'Subject:\s*\[PATCH\s+(?:v\d+\s+)?(\d+)/(\d+)\]', line)
                if not m:
                    continue
                k, total, want = int(m.group(1)), int(m.group(2)), SERIES[doc.own]
                num = re.match(r'(\d+)-', os.path.basename(doc.rel))
                ok = total == want
                items.append((doc.rel, i + 1, m.start(2), m.group(2), str(want + 1), ok))
                if not ok:
                    findings.append((doc.rel, i + 1, '"[PATCH %d/%d]" in a series of %d'
                                     % (k, total, want)))
                if num and int(num.group(1)) != k:
                    findings.append((doc.rel, i + 1, '"[PATCH %d/%d]" in patch file %s'
                                     % (k, total, num.group(1))))
                break
    return findings, items


# ---- paths

def clean(tok):
    prev = None
    while tok != prev:
        prev = tok
        tok = re.sub(r"^[\"'(\[<]+", '', tok)
        tok = re.sub(r"[,;:.!?\"']+$", '', tok)
        tok = re.sub(r"'s$", '', tok)
        tok = re.sub(r'\(\)$', '', tok)
        tok = re.sub(r':\d+(-\d+)?$', '', tok)
        if tok and tok[-1] in ')]}>':
            pair = {')': '(', ']': '[', '}': '{', '>': '<'}[tok[-1]]
            if tok.count(pair) < tok.count(tok[-1]):
                tok = tok[:-1]
    return tok


def braces(p):
    m = re.search(r'\{([^{}]*)\}', p)
    if not m:
        return [p]
    out = []
    for alt in m.group(1).split(','):
        out += braces(p[:m.start()] + alt + p[m.end():])
    return out


def placeholders(p):
    p = re.sub(r'<[^>]*>', '*', p)
    p = re.sub(r'\$\{?\w+\}?', '*', p)
    p = p.replace('...', '*')
    for w in PLACEHOLDER_WORDS:
        p = re.sub(r'(?<![A-Za-z0-9])%s(?![A-Za-z0-9])' % re.escape(w), '*', p)
    return p


def exists(p):
    full = os.path.join(REPO, p)
    if any(ch in p for ch in '*?['):
        return bool(glob.glob(full))
    if p.endswith('/'):
        return os.path.isdir(full)
    return os.path.exists(full)


def built(p):
    """A build output: a target of the Makefile in its folder, or a program
    whose source P.c is in the tree."""
    d, base = os.path.split(p.rstrip('/'))
    return base in make_targets(os.path.join(REPO, d, 'Makefile')) or \
        os.path.isfile(os.path.join(REPO, p.rstrip('/') + '.c'))


def path_candidates(doc):
    out = []    # (line, col, token as written, path from the repository root)

    def consider(tok, line, col, prefixes, topfiles, base):
        c = clean(tok)
        if not c or '://' in c or c.startswith('/') or '=' in c:
            return
        if not (c.startswith(prefixes) or c in topfiles):
            return
        p = c
        if c.startswith('../'):
            p = os.path.normpath(os.path.join(base, c)) + ('/' if c.endswith('/') else '')
            if p.startswith('..'):
                out.append((line, col, c, None))
                return
        if FOREIGN.match(p):
            return
        out.append((line, col, c, p))

    base = os.path.dirname(doc.rel)
    if doc.kind == 'md':
        for t in spans(doc):
            for w, i in words(t):
                line, col = t.at(i)
                consider(w, line, col + len(w) - len(w.lstrip("\"'([<")),
                         MD_PREFIXES, MD_TOPFILES, base)
        for i, line in enumerate(doc.lines):
            for m in re.finditer(r'\]\(([^)\s]+)', line):
                target = m.group(1).split('#')[0]
                if not target or re.match(r'[a-z]+:', target) or target.startswith('/'):
                    continue
                p = os.path.normpath(os.path.join(base, target))
                out.append((i + 1, m.start(1), target, None if p.startswith('..') else p))
    else:
        for i, line in enumerate(doc.lines):
            for m in re.finditer(r'\S+', line.replace('`', ' ')):
                w = m.group(0)
                consider(w, i + 1, m.start() + len(w) - len(w.lstrip("\"'([<")),
                         SERIES_PREFIXES, set(), base)
    return out


def gitignored(paths):
    if not paths or not shutil.which('git'):
        return set()
    try:
        r = subprocess.run(['git', '-C', REPO, 'check-ignore', '--no-index', '--stdin'],
                           input='\n'.join(paths) + '\n', capture_output=True, text=True,
                           timeout=20)
        return set(r.stdout.split('\n'))
    except (OSError, subprocess.SubprocessError):
        return set()


def check_paths(docs):
    findings, items, missing = [], [], []
    for doc in docs:
        for line, col, tok, p in path_candidates(doc):
            if p is None:
                findings.append((doc.rel, line, '`%s`: outside the repository' % tok))
                continue
            alts = braces(p)
            ok = all(exists(a) or exists(placeholders(a)) for a in alts)
            if ok:
                # the self-test renames the token's last component
                if tok == p and '/' in p.rstrip('/') and \
                        not any(ch in p for ch in '*?[{<$') and \
                        doc.lines[line - 1][col:col + len(tok)] == tok:
                    items.append((doc.rel, line, col, tok))
            else:
                missing.append((doc.rel, line, tok, p))
    ignored = gitignored([p.rstrip('/') for _, _, _, p in missing])
    for rel, line, tok, p in missing:
        if p.rstrip('/') in ignored or built(p):
            continue
        what = 'matches no file' if any(ch in p for ch in '*?[{') else 'no such file'
        findings.append((rel, line, '`%s`: %s%s' % (tok, what, '' if tok == p else ' (%s)' % p)))
    return findings, items


# ---- options

def name_re():
    names = []
    for s in SCRIPTS:
        if os.path.isfile(os.path.join(REPO, s)):
            names.append(s)
            if s.startswith('tools/') and s not in NO_BARE_NAME:
                names.append(s[len('tools/'):])
    names += [a for a, s in ALIASES.items() if os.path.isfile(os.path.join(REPO, s))]
    names.sort(key=len, reverse=True)
    return re.compile(r'(?<![\w./-])(%s)(?![\w/-])' % '|'.join(map(re.escape, names))) \
        if names else None


SEP = re.compile(r'&&|\|\||[|;]')


def full_name(n):
    if n in ALIASES:
        return ALIASES[n]
    return n if '/' in n else 'tools/' + n


def option_uses(doc, nre):
    """(line, col, script, option) for each option a document gives a script."""
    out = []
    # code spans by line, to tell an option of another command
    span_of = {}
    for t in spans(doc):
        for k, (line, col) in enumerate(t.pos):
            if col >= 0:
                span_of[(line, col)] = (t, k)
    block, block_indent = None, 0
    for i, line in enumerate(doc.lines):
        n = i + 1
        names = [(m.start(), m.end(), full_name(m.group(1))) for m in nre.finditer(line)]
        indent = len(line) - len(line.lstrip())
        if doc.code[i]:
            if names and names[0][0] == indent:
                block, block_indent = names[0][2], indent
            elif block and not (line.strip() and indent > block_indent):
                block = None
        else:
            block = None
        for m in LONGOPT.finditer(line):
            owner = None
            if not doc.code[i] and line[:m.start()].count('"') % 2:
                continue    # inside a quotation in prose: a program's output
            prev = [x for x in names if x[1] <= m.start()]
            sp = span_of.get((n, m.start()))
            if sp and not doc.code[i]:
                t, k = sp
                head = t.s[:k]
                inner = [x for x in nre.finditer(head)]
                first = head.split()
                if inner:
                    if SEP.search(head[inner[-1].end():]):
                        continue    # after a pipe, && or ;: another command's
                    owner = full_name(inner[-1].group(1))
                elif first and not first[0].startswith('-'):
                    continue        # another command's option
                elif prev:
                    owner = prev[-1][2]
            elif prev:
                if doc.code[i] and SEP.search(line[prev[-1][1]:m.start()]):
                    continue
                owner = prev[-1][2]
            elif block and doc.code[i]:
                owner = block
            if owner:
                out.append((n, m.start(), owner, m.group(0)))
    return out


def check_options(docs, accepted):
    findings, items = [], []
    nre = name_re()
    if nre is None:
        return findings, items
    for doc in docs:
        for line, col, script, opt in option_uses(doc, nre):
            if script not in accepted:
                continue
            if opt in accepted[script]:
                items.append((doc.rel, line, col, opt))
            else:
                findings.append((doc.rel, line, '`%s %s`: %s has no %s'
                                 % (script, opt, script, opt)))
    return findings, items


# ---- make targets

SEPARATORS = {'&&', '||', ';', '|', '(', 'sudo', 'then', 'do', '$'}
# The kernel's and Xen's own targets, as in `make olddefconfig`, `make
# bindeb-pkg`, `make -C xen dist`: not ours.
FOREIGN_TARGET = re.compile(r'(.*config|.*-pkg|bzImage|vmlinux|modules(_\w+)?|headers_\w+|'
                            r'mrproper|distclean|dist|dist-\w+|xen|tools|docs|htmldocs)$')


def make_uses(doc):
    out = []
    for t in spans(doc):
        ws = list(words(t))
        k = 0
        while k < len(ws):
            w = ws[k][0]
            lead = [x for x, _ in ws[:k]]
            while lead and re.fullmatch(r'\w+=\S*', lead[-1]):
                lead.pop()
            if w != 'make' or (lead and lead[-1] not in SEPARATORS):
                k += 1
                continue
            k += 1
            mdir, mfile, targets = '', None, []
            while k < len(ws):
                w, pos = ws[k]
                if w in SEPARATORS or w.startswith('#') or w[0] in '<>' or w.endswith(';'):
                    break
                if '<' in w and '>' not in w[w.index('<'):]:
                    # a placeholder with spaces: KTREE=<the tree it names>
                    while k < len(ws) and '>' not in ws[k][0]:
                        k += 1
                    k += 1
                    continue
                if w in ('-C', '-f', '-I', '-o', '-W') and k + 1 < len(ws):
                    if w == '-C':
                        mdir = ws[k + 1][0]
                    elif w == '-f':
                        mfile = ws[k + 1][0]
                    k += 2
                    continue
                if w.startswith('-C') and len(w) > 2:
                    mdir = w[2:]
                elif w == '-j' and k + 1 < len(ws) and ws[k + 1][0].isdigit():
                    k += 1
                elif not w.startswith('-') and '=' not in w:
                    targets.append((w.rstrip(',.;:)'), pos))
                k += 1
            if re.search(r'[<$`*]', mdir + (mfile or '')):
                continue
            if mdir and not os.path.isdir(os.path.join(REPO, mdir)):
                continue        # another tree's make (`make -C xen`)
            mk = os.path.join(mdir, mfile or 'Makefile')
            for tgt, pos in targets:
                if tgt and not re.search(r'[<$"\']', tgt) and not FOREIGN_TARGET.match(tgt):
                    line, col = t.at(pos)
                    out.append((line, col, mk, tgt))
    return out


def check_make(docs):
    findings, items = [], []
    for doc in docs:
        for line, col, mk, tgt in make_uses(doc):
            full = os.path.join(REPO, mk)
            targets = TOP_TARGETS if mk == 'Makefile' else make_targets(full)
            where = 'the top Makefile (and mk/*.mk)' if mk == 'Makefile' else mk
            if not os.path.isfile(full):
                findings.append((doc.rel, line, '`make %s`: no %s' % (tgt, mk)))
            elif tgt in targets:
                items.append((doc.rel, line, col, tgt))
            else:
                findings.append((doc.rel, line, '`make %s`: not a target of %s' % (tgt, where)))
    return findings, items


# ---- the support matrix against test/suites/SUITES

def suites_lines():
    """[(line number, {xen, xen_kind, linux, kernel, series, full})] of
    test/suites/SUITES, as test/lab/run resolves each line's options
    (--stack, the defaults): its --build-id line."""
    out = []
    path = os.path.join(REPO, 'test', 'suites', 'SUITES')
    if not os.path.isfile(path):
        return out
    with open(path, errors='replace') as f:
        for n, line in enumerate(f, 1):
            words = line.split()
            if not words or words[0].startswith('#'):
                continue
            full = words[0] == 'full'
            if full:
                words = words[1:]
            # --allow-log=REGEX runs to the next " --" or the end (test/check).
            opts = ' '.join(words[1:])
            opts = re.sub(r'(^| )--allow-log=.*?(?= --|$)', '', opts)
            try:
                res = subprocess.run([os.path.join(REPO, 'test', 'lab', 'run'), '--build-id']
                                     + opts.split() + ['--', 'true'],
                                     capture_output=True, text=True, timeout=60)
            except (OSError, subprocess.SubprocessError):
                continue
            m = re.match(r'build xen=([^/ ]+)/([^/ ]+)\S* kernel=([^/ ]+)/([^/ ]+)/(\S+) ',
                         res.stdout)
            if res.returncode != 0 or not m:
                continue
            kind, ver, kernel, linux, series = m.groups()
            if kind == 'stock-4.20':
                kind = 'stock'
            out.append((n, {'xen': ver, 'xen_kind': kind, 'linux': linux,
                            'kernel': kernel, 'series': series, 'full': full}))
    return out


SUITES = suites_lines()


def cells(line):
    """The cells of a Markdown table row ("\\|" is a | inside a cell)."""
    row = line.strip()
    row = row[1:] if row.startswith('|') else row
    row = row[:-1] if row.endswith('|') and not row.endswith('\\|') else row
    return [c.strip() for c in re.split(r'(?<!\\)\|', row)]


def tables(doc):
    """Markdown tables: [(header cells, [(line number, cells)])]."""
    out, i = [], 0
    while i < len(doc.lines):
        line = doc.lines[i]
        if not doc.code[i] and line.lstrip().startswith('|') and i + 1 < len(doc.lines) \
                and re.match(r'\s*\|[\s:|-]+\|\s*$', doc.lines[i + 1]):
            head, rows, j = cells(line), [], i + 2
            while j < len(doc.lines) and doc.lines[j].lstrip().startswith('|'):
                rows.append((j + 1, cells(doc.lines[j])))
                j += 1
            out.append((i + 1, head, rows))
            i = j
            continue
        i += 1
    return out


def plain(cell):
    return re.sub(r'[`*]', '', cell).strip().lower()


def section_of(doc, lineno):
    """The text of the last heading above a line."""
    for k in range(lineno - 1, -1, -1):
        if doc.lines[k].startswith('#') and not doc.code[k]:
            return doc.lines[k].lstrip('#').strip()
    return ''


def matrix_rows(doc):
    """The support matrix of README.md: rows that claim a tested combination,
    as (line, col, version text, xen versions, xen kind, linux versions,
    kernel kind, series, every-run?, what the row says, its state cell)."""
    out = []
    if doc.rel != 'README.md':
        return out
    for start, head, rows in tables(doc):
        if not section_of(doc, start).lower().startswith('support matrix'):
            continue
        hp = [plain(h) for h in head]
        col = {}
        for k, h in enumerate(hp):
            if h == 'xen':
                col['xen'] = k
            elif 'kernel' in h:
                col['kernel'] = k
            elif h in ('state', 'tested', 'status'):
                col['state'] = k
        if len(col) < 3:
            continue
        for n, c in rows:
            if len(c) <= max(col.values()):
                continue
            xen, kern, state = c[col['xen']], c[col['kernel']], plain(c[col['state']])
            if 'tested' not in state or re.search(r'\bnot (yet|tested)\b|\buntested\b', state):
                continue
            xvers = re.findall(r'(?<![\w.])(4\.\d+|staging)(?![\w.-])', xen) or [None]
            xkind = 'stock' if re.search(r'\bstock\b', xen, re.I) else \
                (None if not re.search(r'\d|staging', xen) else 'patched')
            kvers = re.findall(r'(?<![\w.])(\d+\.\d+)(?![\w.-])', kern)
            kkind = 'stock' if re.search(r'without (the |a )?series|stock', kern, re.I) \
                else 'patched'
            series = 'upstream' if re.search(r'upstream form', kern, re.I) else 'module'
            every = bool(re.search(r'every (`?make check`?|run)', state))
            line = doc.lines[n - 1]
            for v in kvers or [None]:
                pos = line.find(v, line.find(c[col['kernel']])) if v else -1
                out.append((n, pos, v, xvers, xkind, v, kkind, series, every, c[0],
                            c[col['state']]))
    return out


def suite_matches(xv, xkind, lv, kkind, series, every):
    for n, s in SUITES:
        if every and s['full']:
            continue
        if xv is not None and s['xen'] != xv:
            continue
        if xkind == 'stock' and s['xen_kind'] != 'stock':
            continue
        if xkind == 'patched' and s['xen_kind'] not in ('patched', 'debug'):
            continue
        if xkind == 'release' and s['xen_kind'] != 'patched':
            continue
        if xkind == 'debug' and s['xen_kind'] != 'debug':
            continue
        if lv is not None and s['linux'] != lv:
            continue
        if kkind == 'stock' and s['kernel'] != 'stock':
            continue
        if kkind == 'patched' and s['kernel'] not in ('patched', 'debug', 'kasan'):
            continue
        if s['series'] != series:
            continue
        return n
    return None


def check_matrix(docs):
    findings, items = [], []
    for doc in docs:
        for n, pos, vtext, xvers, xkind, lv, kkind, series, every, host, state \
                in matrix_rows(doc):
            ok = True
            # "every make check ... on the debug Xen 4.19" (or "release
            # build", "release and debug builds") in a clause (between
            # semicolons) that does not say "whole matrix": that build
            # every run.
            if every and xkind == 'patched':
                builds = set()
                for clause in plain(state).split(';'):
                    if 'whole matrix' in clause:
                        continue
                    for m in re.finditer(r'\b(release|debug)(?: and (release|debug))? '
                                         r'(?:xen|builds?)\b', clause):
                        builds.update(b for b in m.groups() if b)
                for build in sorted(builds):
                    for xv in xvers:
                        if suite_matches(xv, build, lv, kkind, series, True) is None:
                            ok = False
                            findings.append((doc.rel, n, 'the support matrix row "%s" says '
                                             'the %s Xen %s with Linux %s runs every '
                                             '`make check`, but test/suites/SUITES has no '
                                             'such line outside "full"' % (
                                                 host, build, xv, lv or '(any version)')))
            for xv in xvers:
                if suite_matches(xv, xkind, lv, kkind, series, every) is None:
                    ok = False
                    what = '%s Xen %s' % (xkind or 'any', xv or '(any version)')
                    findings.append((doc.rel, n, 'the support matrix row "%s" says %s with '
                                     'Linux %s%s is tested%s, but test/suites/SUITES has no '
                                     'such line%s' % (
                                         host, what, lv or '(any version)',
                                         ' (upstream form)' if series == 'upstream' else
                                         (' without the series' if kkind == 'stock' else
                                          ' with its series'),
                                         ' every run' if every else '',
                                         ' outside "full"' if every else '')))
            if vtext and pos >= 0:
                items.append((doc.rel, n, pos, vtext, '9.99', ok))
    return findings, items


# ---- statistics examples against module/stats.c

def stats_lines():
    """The stats file's line names, in order, from module/stats.c (and the
    enum of module/stats.h): the first word of each seq_printf() of
    xps_stats_show(), the counters' names for the one that prints them."""
    try:
        with open(os.path.join(REPO, 'module', 'stats.c'), errors='replace') as f:
            src = f.read()
        with open(os.path.join(REPO, 'module', 'stats.h'), errors='replace') as f:
            hdr = f.read()
    except OSError:
        return None
    enum = re.search(r'enum xps_stat\s*\{(.*?)\}', hdr, re.S)
    arr = dict(re.findall(r'\[(XPS_STAT_\w+)\]\s*=\s*"(\w+)"', src))
    show = re.search(r'xps_stats_show\([^)]*\)\s*\{(.*?)\n\}', src, re.S)
    if not enum or not arr or not show:
        return None
    counters = [arr[e] for e in re.findall(r'\b(XPS_STAT_\w+)', enum.group(1)) if e in arr]
    names = []
    for fmt in re.findall(r'seq_printf\(\s*\w+\s*,\s*"([^"]*)"', show.group(1)):
        first = fmt.split()[0] if fmt.split() else ''
        names += counters if first.startswith('%') else [first]
    return names


STATS = stats_lines()
STAT_LINE = re.compile(r'^\s*([a-z][a-z_]*) (\d+|-|auto|batched|sync|noswap)\s*$')


def stats_examples(root):
    """(rel, [(line, col, name)]) for each block of "name value" lines with a
    "calls" line, in the Markdown documents and the tools' examples."""
    out = []
    for rel in doc_list(root) + doc_list(root, EXAMPLE_GLOBS):
        if rel.endswith('.patch') or '-patch/' in rel:
            continue
        with open(os.path.join(root, rel), errors='replace') as f:
            lines = f.read().split('\n')
        block = []
        for n, line in enumerate(lines + [''], 1):
            m = STAT_LINE.match(line)
            if m:
                block.append((n, line.index(m.group(1)), m.group(1)))
                continue
            if any(name == 'calls' for _, _, name in block):
                out.append((rel, block))
            block = []
    return out


def check_stats(root, docs):
    findings, items = [], []
    if not STATS:
        return findings, items
    counters = [s for s in STATS if s != 'mode']
    for rel, block in stats_examples(root):
        names = [name for _, _, name in block]
        ok = names == STATS
        if not ok:
            k = next((i for i, (a, b) in enumerate(zip(names, STATS)) if a != b),
                     min(len(names), len(STATS)))
            line = block[min(k, len(block) - 1)][0]
            got = names[k] if k < len(names) else '(nothing)'
            want = STATS[k] if k < len(STATS) else '(nothing)'
            findings.append((rel, line, 'a statistics example whose line %d is "%s" where '
                             'module/stats.c prints "%s" (example: %s; module: %s)' % (
                                 k + 1, got, want, ' '.join(names), ' '.join(STATS))))
        items += [(rel, n, col, name, name + '_drift_selftest', ok) for n, col, name in block]
    for doc in docs:
        if doc.kind != 'md':
            continue
        for start, head, rows in tables(doc):
            if plain(head[0]) != 'counter':
                continue
            rows = [(n, c) for n, c in rows if c and c[0].strip('`* ')]
            names = [re.sub(r'[`*]', '', c[0]).split()[0] for _, c in rows]
            ok = names == counters
            if not ok:
                k = next((i for i, (x, y) in enumerate(zip(names, counters)) if x != y),
                         min(len(names), len(counters)))
                line = rows[min(k, len(rows) - 1)][0] if rows else start
                got = names[k] if k < len(names) else '(nothing)'
                want = counters[k] if k < len(counters) else '(nothing)'
                findings.append((doc.rel, line, 'a table of the counters whose row %d is '
                                 '"%s" where module/stats.c has "%s" (table: %s; module: %s)'
                                 % (k + 1, got, want, ' '.join(names), ' '.join(counters))))
            for n, c in rows:
                m = re.search(r'`(\w+)`', doc.lines[n - 1])
                if m:
                    items.append((doc.rel, n, m.start(1), m.group(1),
                                  m.group(1) + '_drift_selftest', ok))
    return findings, items


# ---- option lists against the scripts' usage

SHORTOPT = re.compile(r'(?<![\w/-])-[A-Za-z](?![\w-])')
# "`tools/README.md` has every option": a document said to list all of them
CLAIM = re.compile(r'`?([\w./-]+\.md|[\w./-]*README[\w.]*)`?\]?(?:\([^)\s]*\))?\s+'
                   r'(?:has|lists|gives|documents|explains)\s+(?:every|all)\s+'
                   r'(?:of\s+its\s+|the\s+|its\s+)?options?\b')
ALL_OPTIONS = re.compile(r'\b(?:every|all)\s+(?:of\s+its\s+|the\s+|its\s+)?options\b|'
                         r'\bevery option\b')


def option_lists(doc, nre):
    """(table line, script, [(line, col, option)], complete?) for each table
    whose first header cell is "option": the script is the last one named
    above it; complete when the paragraph that leads into it (ending in
    ":") says every option ("Every option:", "all its options:")."""
    out = []
    for start, head, rows in tables(doc):
        if plain(head[0]) not in ('option', 'options', 'flag', 'flags'):
            continue
        script = None
        for k in range(start - 2, -1, -1):
            names = list(nre.finditer(doc.lines[k]))
            if names:
                script = full_name(names[-1].group(1))
                break
        if script is None:
            continue
        para = []
        for k in range(start - 2, -1, -1):
            if not doc.lines[k].strip():
                if para:
                    break
                continue
            para.insert(0, doc.lines[k])
        opts = []
        for n, c in rows:
            line = doc.lines[n - 1]
            bars = [m.start() for m in re.finditer(r'(?<!\\)\|', line)]
            first = line[:bars[1]] if len(bars) > 1 else line
            for m in re.finditer(r'`(-[^`]*)`', first):
                o = re.match(r'--?[A-Za-z][\w-]*', m.group(1))
                if o:
                    opts.append((n, m.start(1), o.group(0)))
        lead = ' '.join(para).rstrip()
        out.append((start, script, opts,
                    lead.endswith(':') and bool(ALL_OPTIONS.search(lead))))
    return out


def required(script, accepted):
    """The long options a complete list of a script's options must have:
    those of its usage synopsis, else all it accepts; never --help."""
    return (usage_options(HELP.get(script, '')) or accepted[script]) - {'--help'}


def check_option_lists(docs, accepted):
    findings, items = [], []
    nre = name_re()
    if nre is None:
        return findings, items
    by_doc = {}
    for doc in docs:
        if doc.kind != 'md':
            continue
        for start, script, opts, complete in option_lists(doc, nre):
            if script not in accepted:
                continue
            longs = accepted[script]
            shorts = set(SHORTOPT.findall(HELP.get(script, '')))
            listed = set()
            for n, col, o in opts:
                known = o in longs if o.startswith('--') else o in shorts
                listed.add(o)
                items.append((doc.rel, n, col, o, o + '-drift-selftest', known))
                if not known:
                    findings.append((doc.rel, n, '`%s` in an option list of %s, whose usage '
                                     'has no %s' % (o, script, o)))
            by_doc.setdefault((doc.rel, script), set()).update(listed)
            if complete:
                lack = sorted(required(script, accepted) - listed)
                if lack:
                    findings.append((doc.rel, start, 'the option list of %s is said to have '
                                     'every option but lacks %s' % (script, ' '.join(lack))))
    # "`D` has every option" of the script named in the same sentence
    for doc in docs:
        if doc.kind != 'md':
            continue
        for t, a, b in units(doc):
            for m in CLAIM.finditer(t.s, a, b):
                target = os.path.normpath(os.path.join(os.path.dirname(doc.rel), m.group(1))) \
                    if m.group(1).startswith('../') else m.group(1)
                names = [full_name(x.group(1)) for x in nre.finditer(t.s[a:b])]
                line = t.at(m.start())[0]
                for script in dict.fromkeys(names):
                    if script not in accepted:
                        continue
                    lack = sorted(required(script, accepted)
                                  - by_doc.get((target, script), set()))
                    if lack:
                        findings.append((doc.rel, line, '`%s` is said to have every option '
                                         'of %s, but its option lists lack %s' % (
                                             target, script, ' '.join(lack))))
    return findings, items


# ---- tracker labels in what users read

LABEL = re.compile(r"\b[Ii]ssues? #?\d+\b|(?<![\w&#])#\d+\b|\b[Ss]tops? \d+(?:'s\b|(?=[),.;:]))")


def check_labels(docs):
    findings = []
    users = set(doc_list(REPO, USER_DOCS)) - {HISTORY}
    for doc in docs:
        if doc.rel not in users or doc.kind != 'md':
            continue
        for i, line in enumerate(doc.lines):
            if doc.code[i]:
                continue
            for m in LABEL.finditer(line):
                findings.append((doc.rel, i + 1, '"%s": a label of the project\'s tracker, '
                                 'which users cannot see; say what it is' % m.group(0)))
    return findings, []


# ---- references to a document's sections

def norm_heading(h):
    h = re.sub(r'[`*]', '', h.lstrip('#')).strip()
    return re.sub(r'^\d+(\.\d+)*\.?\s+', '', h).lower()


def slug(h):
    """GitHub's anchor of a heading."""
    h = re.sub(r'[`*]', '', h.lstrip('#')).strip().lower()
    return re.sub(r'\s', '-', re.sub(r'[^\w\s-]', '', h))


def headings(root, rel):
    """[(line, heading)] of a Markdown document, or None if it is not there."""
    path = os.path.join(root, rel)
    if not os.path.isfile(path):
        return None
    out, fence = [], False
    with open(path, errors='replace') as f:
        for n, line in enumerate(f, 1):
            if re.match(r'\s*(```|~~~)', line):
                fence = not fence
            elif not fence and re.match(r'#{1,6}\s', line):
                out.append((n, line.rstrip('\n')))
    return out


REF_RES = [
    # `docs/design.md`, "Open hazards"; `docs/results.md`'s "Staging"
    ('file', re.compile(r'`([\w./-]+\.md|[\w./-]*README[\w.]*)`(?:,|\'s)\s*"([^"]+)"')),
    # [`docs/design.md`](docs/design.md), "Statistics"
    ('link', re.compile(r'\]\(([^)#\s]+)\),?\s*"([^"]+)"')),
    # the README's "Using it"
    ('readme', re.compile(r'\bthe README\'s\s+"([^"]+)"')),
    # "Guests" below; below, "Failures on record"
    ('below', re.compile(r'"([^"]+)"\s+(below|above)\b')),
    ('below2', re.compile(r'\b(below|above),\s+"([^"]+)"')),
]


def section_refs(doc):
    """(line, col, target document, section, direction) of each reference."""
    out = []
    base = os.path.dirname(doc.rel)
    for t, a, b in units(doc):
        for kind, rx in REF_RES:
            for m in rx.finditer(t.s, a, b):
                if kind == 'file':
                    target, sec, k = m.group(1), m.group(2), 2
                elif kind == 'link':
                    if re.match(r'[a-z]+:', m.group(1)):
                        continue
                    target = os.path.normpath(os.path.join(base, m.group(1)))
                    sec, k = m.group(2), 2
                elif kind == 'readme':
                    target, sec, k = 'README.md', m.group(1), 1
                elif kind == 'below':
                    target, sec, k = doc.rel, m.group(1), 1
                else:
                    target, sec, k = doc.rel, m.group(2), 2
                line, col = t.at(m.start(k))
                how = m.group(2) if kind == 'below' else (m.group(1) if kind == 'below2' else '')
                out.append((line, col, target, sec, how))
    for i, line in enumerate(doc.lines):
        if doc.code[i]:
            continue
        for m in re.finditer(r'\]\(([^)\s#]*)#([^)\s]+)\)', line):
            if re.match(r'[a-z]+:', m.group(1)):
                continue
            target = os.path.normpath(os.path.join(base, m.group(1))) if m.group(1) else doc.rel
            out.append((i + 1, m.start(2), target, '#' + m.group(2), ''))
    return out


def check_sections(root, docs):
    findings, items = [], []
    for doc in docs:
        if doc.kind != 'md' or doc.rel == HISTORY:
            continue
        for line, col, target, sec, how in section_refs(doc):
            hs = headings(root, target)
            if hs is None:
                continue        # no such document: the paths check says so
            if sec.startswith('#'):
                ok = any(slug(h) == sec[1:].lower() for _, h in hs)
            else:
                want = norm_heading(sec)
                cands = [n for n, h in hs if norm_heading(h).startswith(want)]
                if how == 'below':
                    cands = [n for n in cands if n > line]
                elif how == 'above':
                    cands = [n for n in cands if n < line]
                ok = bool(cands)
            where = ('%s %s' % (how, 'in ' + target if target != doc.rel else '')).strip() \
                if how else target
            text = doc.lines[line - 1][col:col + len(sec)] if col >= 0 else ''
            items.append((doc.rel, line, col, sec, sec + ' drift-selftest',
                          ok and text == sec))
            if not ok:
                findings.append((doc.rel, line, 'section "%s": no such heading %s' % (
                    sec, where)))
    return findings, items


# ---- running, reporting, the self-test

def run_checks(root, accepted, only=None):
    """{check: (findings, items)} of the documents under root; only: run
    just that check."""
    docs = load_docs(root)
    run = {'counts': lambda: check_counts(docs), 'paths': lambda: check_paths(docs),
           'options': lambda: check_options(docs, accepted),
           'make-targets': lambda: check_make(docs), 'matrix': lambda: check_matrix(docs),
           'stats': lambda: check_stats(root, docs),
           'option-lists': lambda: check_option_lists(docs, accepted),
           'labels': lambda: check_labels(docs),
           'sections': lambda: check_sections(root, docs)}
    return {name: f() for name, f in run.items() if only in (None, name)}


CHECKS = ('counts', 'paths', 'options', 'make-targets', 'matrix', 'stats', 'option-lists',
          'labels', 'sections')


def report(name, findings):
    findings = list(dict.fromkeys(findings))
    if not findings:
        print('PASS: drift: %s' % name)
        return 0
    rel, line, msg = findings[0]
    more = ' (and %d more)' % (len(findings) - 1) if len(findings) > 1 else ''
    print('FAIL: drift: %s: %s:%d: %s%s' % (name, rel, line, msg, more))
    for rel, line, msg in findings:
        print('  %s:%d: %s' % (rel, line, msg))
    return 1


def mutate(root, rel, line, col, old, new):
    p = os.path.join(root, rel)
    with open(p, errors='replace') as f:
        lines = f.read().split('\n')
    s = lines[line - 1]
    if s[col:col + len(old)] != old:
        return False
    lines[line - 1] = s[:col] + new + s[col + len(old):]
    with open(p, 'w') as f:
        f.write('\n'.join(lines))
    return True


def append(root, text):
    p = os.path.join(root, 'README.md')
    lines = []
    if os.path.exists(p):
        with open(p, errors='replace') as f:
            lines = f.read().rstrip('\n').split('\n')
    lines += ['', text, '']
    with open(p, 'w') as f:
        f.write('\n'.join(lines))
    return 'README.md', len(lines) - 1


def renamed(path):
    """test/lab/run -> test/lab/drift-selftest-run"""
    return re.sub(r'([^/]+/?)$', r'drift-selftest-\1', path)


def selftest(accepted):
    """In a copy of the documents, change one correct statement of each kind
    (or add a wrong one) and see that its check finds something new there."""
    first = sorted(SERIES)[0] if SERIES else None
    script = next((s for s in SCRIPTS if accepted.get(s)), None)
    # (name, check, the changed text of an item, a wrong statement to add)
    plans = [
        ('count', 'counts', lambda it: it[4],
         first and 'The %s %s series (`%s`) has %d patches.' % (
             first[0].capitalize(), first[1], folder(first), SERIES[first] + 1)),
        ('path', 'paths', lambda it: renamed(it[3]), 'See `test/drift-selftest-missing`.'),
        ('option', 'options', lambda it: it[3] + '-drift-selftest',
         script and 'Run `%s --drift-selftest`.' % script),
        ('make-target', 'make-targets', lambda it: it[3] + '-drift-selftest',
         'Run `make drift-selftest`.'),
        # the new text of these items is their it[4]
        ('matrix-row', 'matrix', lambda it: it[4], None),
        ('stats-example', 'stats', lambda it: it[4], None),
        ('option-list', 'option-lists', lambda it: it[4], None),
        ('tracker-label', 'labels', None, 'Fixed in issue 99.'),
        ('section', 'sections', lambda it: it[4],
         'See `README.md`, "No such section drift-selftest".'),
    ]
    failed = 0
    tmp = tempfile.mkdtemp(prefix='drift.')
    try:
        for rel in doc_list(REPO) + doc_list(REPO, EXAMPLE_GLOBS):
            os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
            shutil.copy(os.path.join(REPO, rel), os.path.join(tmp, rel))
        base = run_checks(tmp, accepted)
        for name, check, change, statement in plans:
            label = 'catches-changed-' + name
            findings, items = base[check]
            good = [it for it in items if len(it) < 6 or it[5]]
            if not good and not statement:
                print('PASS: drift: %s (nothing to change: no series or script)' % label)
                continue
            rel = good[0][0] if good else 'README.md'
            path = os.path.join(tmp, rel)
            saved = None
            if os.path.exists(path):
                with open(path, 'rb') as f:
                    saved = f.read()
            if good:
                it = good[0]
                line, new = it[1], change(it)
                done = mutate(tmp, rel, line, it[2], it[3], new)
                how = '%s:%d: %s -> %s' % (rel, line, it[3], new)
            else:
                rel, line = append(tmp, statement)
                done, how = True, 'added %s:%d: %s' % (rel, line, statement)
            after = run_checks(tmp, accepted, check)[check][0]
            n0 = sum(1 for f in findings if f[:2] == (rel, line))
            n1 = sum(1 for f in after if f[:2] == (rel, line))
            if not done:
                failed = 1
                print('FAIL: drift: %s: could not change %s' % (label, how))
            elif n1 > n0:
                print('PASS: drift: %s' % label)
            else:
                failed = 1
                print('FAIL: drift: %s: the %s check missed a change (%s)' % (label, check, how))
            if saved is None:
                os.remove(path)
            else:
                with open(path, 'wb') as f:
                    f.write(saved)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return failed


def main():
    accepted, problems = script_options()
    failed = 0
    if MODE == 'all':
        res = run_checks(REPO, accepted)
        for name in CHECKS:
            found = res[name][0]
            if name == 'options':
                found = problems + found
            failed |= report(name, found)
    failed |= selftest(accepted)
    sys.exit(1 if failed else 0)


main()

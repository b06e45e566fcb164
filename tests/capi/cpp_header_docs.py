#!/usr/bin/env python3
"""Every public declaration of the C++ headers carries a doc comment.

A heuristic scan of each include/agebloom/**/*.hpp, include/agebloom/gpu/replay.hpp included
(agebloom.h has its own test, header_docs.py): it follows namespaces, classes and their access
sections, and skips function bodies, initialisers and the implementation
namespaces (detail, *_detail). A declaration that starts at namespace scope
or in a public section of a class (a function, class, struct, union, enum,
alias, variable or data member, with any template <...> line above it) is
documented when
  - a comment line (// ..., or the end of a /* ... */ block) is directly
    above it (above its template <...> line), or
  - its first line ends with a // comment (a field, a one-line accessor).
An implementation namespace needs one comment, above its opening line or as
its first line. Enumerators are not checked (document the ones whose meaning
is not obvious from the name).
  cpp_header_docs.py INCLUDE_AGEBLOOM_DIR [HEADER...]
CPP_HEADER_DOCS_TRACE=1 also prints every declaration it found."""
import os
import re
import sys

KEYWORDS_NOT_INIT = {'const', 'noexcept', 'override', 'final', 'mutable', 'try', 'else', 'do'}
SKIP_STARTS = ('static_assert', 'friend ', 'using namespace', 'extern "C"', 'namespace ')


def strip_code(line, state):
    """The code of one line without comments and literal contents; state
    carries an open /* ... */ across lines. Returns (code, trailing_comment)."""
    out = []
    i, n = 0, len(line)
    trailing = False
    while i < n:
        if state['block']:
            end = line.find('*/', i)
            if end < 0:
                return ''.join(out), trailing
            state['block'] = False
            i = end + 2
            continue
        c = line[i]
        if line.startswith('//', i):
            trailing = bool(''.join(out).strip())
            break
        if line.startswith('/*', i):
            state['block'] = True
            i += 2
            continue
        if c == '"' or (c == "'" and not (i > 0 and line[i - 1].isalnum())):
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == '\\' else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return ''.join(out), trailing


def is_comment_line(raw):
    s = raw.strip()
    return s.startswith('//') or s.startswith('*') or s.startswith('/*') or s.endswith('*/')


def scope_of(stmt, parent):
    """What a '{' opens, given the statement text before it."""
    s = re.sub(r'\[\[[^\]]*\]\]', '', stmt).strip()
    s = re.sub(r'^template\s*<.*?>\s*(?=(class|struct|union|enum)\b)', '', s)
    if parent in ('body', 'init'):
        return 'body'
    m = re.match(r'namespace\s*([\w:]*)', s)
    if m:
        name = m.group(1).split('::')[-1]
        return 'detail' if name == 'detail' or name.endswith('_detail') else 'ns'
    if s.startswith('extern "'):
        return 'ns'
    if re.match(r'(enum)\b', s):
        return 'enum'
    if re.match(r'(class|struct|union)\b', s) and '(' not in s.split(':')[0] and '=' not in s:
        return 'class:' + ('private' if s.startswith('class') else 'public')
    t = s.rstrip()
    if not t or t.endswith(('=', ',', '(', '[', 'return')):
        return 'init'
    if t.endswith((')', '}')):
        return 'body'
    if t.endswith('>'):
        return 'body' if '->' in t else 'init'
    m = re.search(r'(\w+)$', t)
    if m and m.group(1) not in KEYWORDS_NOT_INIT:
        return 'init'
    return 'body'


def check(path):
    raw = open(path, encoding='utf-8').read().split('\n')
    state = {'block': False}
    stack = []          # scope kinds: ns, detail, class:public|private|protected, enum, body, init
    stmt = ''           # the current statement's code so far
    parens = 0
    missing = []
    pending_detail = None  # line of a detail namespace opening not yet documented
    continuation = False   # a preprocessor line ending in a backslash
    for i, line in enumerate(raw):
        was_block = state['block']
        code, trailing = strip_code(line, state)
        s = code.strip()
        if continuation or (not was_block and s.startswith('#')):
            continuation = line.rstrip().endswith('\\')
            continue
        if pending_detail is not None:
            if s and not is_comment_line(line):
                missing.append((pending_detail, raw[pending_detail].strip() + '  (an implementation namespace: one comment)'))
            if line.strip():
                pending_detail = None
        if not s:
            continue
        top = stack[-1] if stack else 'ns'
        public = all(k in ('ns', 'class:public') for k in stack)
        at_start = stmt.strip() == '' and parens == 0
        if at_start and re.match(r'(public|private|protected)\s*:', s) and top.startswith('class'):
            stack[-1] = 'class:' + s.split(':')[0].strip()
            continue
        if at_start and public and not s.startswith('}') and not s.startswith(SKIP_STARTS) and s != ';':
            if os.environ.get('CPP_HEADER_DOCS_TRACE'):
                print(f'  decl {path}:{i + 1}: {s[:70]}')
            above = raw[i - 1] if i > 0 else ''
            documented = trailing or is_comment_line(above)
            if not documented:
                missing.append((i, line.strip()))
        if at_start and re.match(r'namespace\s+\w*detail\b', s) and top in ('ns', 'class:public'):
            if not is_comment_line(raw[i - 1] if i > 0 else ''):
                pending_detail = i
        # Walk the code: parens, braces, statement ends.
        for c in code:
            if c == '(':
                parens += 1
                stmt += c
            elif c == ')':
                parens -= 1
                stmt += c
            elif c == '{':
                kind = scope_of(stmt, stack[-1] if stack else 'ns')
                stack.append(kind)
                if kind in ('ns', 'detail', 'enum') or kind.startswith('class'):
                    stmt, parens = '', 0
                else:
                    stmt += c
            elif c == '}':
                kind = stack.pop() if stack else 'ns'
                if kind == 'init':
                    stmt += c
                elif kind == 'body' and (stack[-1] if stack else 'ns') in ('body', 'init'):
                    stmt += c
                else:
                    # A namespace, class or enum closes; a function body ends its statement.
                    stmt, parens = ('' if kind == 'body' else stmt), 0
            elif c == ';' and parens == 0 and (not stack or stack[-1] not in ('body', 'init', 'enum')):
                stmt = ''
            elif c == ':' and stack and stack[-1].startswith('class') and stmt.strip() in ('public', 'private', 'protected'):
                stmt = ''
            else:
                stmt += c
        # Trailing text inside an enum is its enumerator list: not a statement.
        if stack and stack[-1] == 'enum':
            stmt = ''
    return missing


def main():
    root = sys.argv[1]
    headers = sys.argv[2:]
    if not headers:
        for d, _, files in os.walk(root):
            headers += [os.path.join(d, f) for f in files if f.endswith('.hpp')]
    total = 0
    for h in sorted(headers):
        for i, text in check(h):
            print(f'{h}:{i + 1}: undocumented: {text}')
            total += 1
    print(f'cpp_header_docs: {len(headers)} headers, {total} undocumented declarations')
    return 1 if total else 0


if __name__ == '__main__':
    sys.exit(main())

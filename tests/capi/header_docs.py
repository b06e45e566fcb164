#!/usr/bin/env python3
"""Every public declaration of agebloom.h carries a doc comment: each
function, typedef, enum constant, struct field and #define, with a /** ... */
(or /**< ... */ after it) or a comment block right above it.
  header_docs.py AGEBLOOM_H"""
import re
import sys

lines = open(sys.argv[1]).read().split('\n')
missing = []


def documented(i):
    line = lines[i]
    if '/**<' in line or re.search(r'/\*\*.*\*/', line):
        return True
    j = i - 1
    while j >= 0 and lines[j].strip() == '':
        return False
    return lines[j].rstrip().endswith('*/') or lines[j].strip().startswith('*') or lines[j].strip().startswith('//')


in_struct = 0
in_enum = False
for i, line in enumerate(lines):
    s = line.strip()
    if s.startswith('AGEBLOOM_API') or s.startswith('static inline'):
        if not documented(i):
            missing.append(i)
    elif re.match(r'typedef (struct|enum) \w+ \{', s) or re.match(r'typedef .*;$', s):
        if not documented(i):
            missing.append(i)
        in_enum = s.startswith('typedef enum')
    elif re.match(r'#define AGEBLOOM_\w+ ', s) and not s.startswith('#define AGEBLOOM_AGEBLOOM_H'):
        if not documented(i):
            missing.append(i)
    elif in_enum and re.match(r'AGEBLOOM_\w+ = ', s):
        if not documented(i):
            missing.append(i)
    elif re.match(r'^  (const )?(unsigned |signed )?(u?int\d+_t|double|int|char|const char\*|size_t)\s+\w+(\[\d+\])?;', line) or \
            re.match(r'^    (char|double)\s+\w+(\[\d+\])?;', line):
        if not documented(i):
            missing.append(i)
    if s.startswith('}') and s.endswith(';'):
        in_enum = False

for i in missing:
    print(f'{sys.argv[1]}:{i + 1}: undocumented: {lines[i].strip()}')
print(f'header_docs: {len(missing)} undocumented declarations')
sys.exit(1 if missing else 0)

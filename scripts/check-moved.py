#!/usr/bin/env python3
"""Nothing lost when prose moves: every sentence of every paragraph of OLD
(a markdown file, e.g. `git show 218471f:README.md`) must be found, after
normalising (markdown and troff markup, case, blanks), in one of the NEW
files (markdown, or a man page: *.1).  Prints each paragraph with a
sentence not found, and a count; exits 1 when any.

    scripts/check-moved.py OLD NEW...
"""
import re
import sys


def norm(s):
    s = s.replace('\\-', '-').replace('\\(aq', "'").replace('\\(em', '-')
    s = re.sub(r'\\f[BIRP]', '', s)
    s = re.sub(r'\]\([^)]*\)', ']', s)  # markdown links: keep the text
    s = re.sub(r'[`*_\[\]|>"\'\\]', ' ', s)
    s = s.lower()
    return re.sub(r'\s+', ' ', s).strip()


def man_text(t):
    out = []
    for line in t.split('\n'):
        if line.startswith('.\\"'):
            continue
        m = re.match(r'^\.(B|I|BR|IR|RB|RI|BI|IB|SM|SB)\s+(.*)$', line)
        if m:
            words = re.findall(r'"[^"]*"|\S+', m.group(2))
            out.append(''.join(w.strip('"') for w in words)
                       if len(m.group(1)) == 2 else ' '.join(w.strip('"') for w in words))
        elif line.startswith('.'):
            out.append(' ')
        else:
            out.append(line)
    return ' '.join(out)


def paragraphs(t):
    paras, cur, code = [], [], False
    for line in t.split('\n'):
        if line.startswith('    ') and not cur:
            code = True
        if not line.strip():
            if cur:
                paras.append((code, '\n'.join(cur)))
            cur, code = [], False
            continue
        if line.startswith('#'):
            continue  # headings are reorganised, not facts
        # list items and table rows are paragraphs of their own
        if cur and not code and (re.match(r'^\s*([-*]|\d+\.)\s', line) or line.startswith('|')):
            paras.append((code, '\n'.join(cur)))
            cur = []
        cur.append(line)
    if cur:
        paras.append((code, '\n'.join(cur)))
    return paras


def sentences(p):
    for s in re.split(r'(?<=[.;:!?)])\s+(?=[A-Z(`*])|;\s+', p):
        n = norm(s).rstrip('.:;,')
        if len(n) >= 20 and not re.fullmatch(r'[-| ]*', n):
            yield n


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    old = open(sys.argv[1]).read()
    hay = []
    for f in sys.argv[2:]:
        t = open(f).read()
        hay.append(norm(man_text(t) if re.search(r'\.\d$', f) else t))
    hay = '\n'.join(hay)
    paras = paragraphs(old)
    lost = 0
    for code, p in paras:
        miss = [s for s in (sentences(p) if not code else
                            [norm(l) for l in p.split('\n') if len(norm(l)) >= 8])
                if s not in hay]
        if miss:
            lost += 1
            print('--- not found:', *('  ' + m for m in miss), sep='\n')
    print(f'check-moved: {len(paras)} paragraphs of {sys.argv[1]}, '
          f'{len(paras) - lost} found whole, {lost} with a sentence not found')
    sys.exit(1 if lost else 0)


if __name__ == '__main__':
    main()

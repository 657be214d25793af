// The documentation's links: every relative link and #anchor in README.md, CONTRIBUTING.md and
// docs/*.md must resolve (the file or folder exists; the heading is on the page). Run by
// scripts/docs-links.test.ts; `npx tsx scripts/docs-links.ts` prints what is broken.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");

/** The pages whose links are checked, relative to the project root. */
export function documentationPages(root = ROOT): string[] {
  const docs = existsSync(path.join(root, "docs"))
    ? readdirSync(path.join(root, "docs"))
        .filter((f) => f.endsWith(".md"))
        .sort()
        .map((f) => `docs/${f}`)
    : [];
  return ["README.md", "CONTRIBUTING.md", ...docs];
}

/** GitHub's heading anchor: lower case, punctuation dropped (not `-` or `_`), spaces to `-`. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/`([^`]*)`/g, "$1")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The page's lines, with those inside fenced code blocks (and the fences) as null. */
function linesOutsideFences(markdown: string): (string | null)[] {
  const out: (string | null)[] = [];
  let fence: string | undefined;
  for (const line of markdown.split("\n")) {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open?.[1] && open[1][0] === fence[0] && open[1].length >= fence.length && line.trim() === open[1]) fence = undefined;
      out.push(null);
    } else if (open?.[1]) {
      fence = open[1];
      out.push(null);
    } else {
      out.push(line);
    }
  }
  return out;
}

/** Markdown without its fenced code blocks and inline code spans (links there are not links). */
function prose(markdown: string): string[] {
  return linesOutsideFences(markdown).map((line) => (line ?? "").replace(/(`+)(?:(?!\1).)+?\1/g, (m) => " ".repeat(m.length)));
}

/** Every heading's anchor on a page, numbered as GitHub numbers repeats (`x`, `x-1`, …). */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  for (const line of linesOutsideFences(markdown)) {
    const heading = line === null ? null : /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading?.[1]) continue;
    const base = githubSlug(heading[1]);
    const n = counts.get(base) ?? 0;
    counts.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) if (m[1]) anchors.add(m[1]);
  return anchors;
}

export type Link = { page: string; line: number; target: string };

/** Every inline link and image of a page (not in code), with its line. */
export function linksOf(markdown: string, page: string): Link[] {
  const links: Link[] = [];
  prose(markdown).forEach((line, i) => {
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) if (m[1]) links.push({ page, line: i + 1, target: m[1] });
    for (const m of line.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g)) if (m[1]) links.push({ page, line: i + 1, target: m[1] });
  });
  return links;
}

/** The broken relative links and anchors of the documentation, as `page:line: target: why`. */
export function brokenLinks(root = ROOT, pages = documentationPages(root)): string[] {
  const texts = new Map<string, string>();
  const read = (file: string): string | undefined => {
    if (!texts.has(file)) texts.set(file, readFileSync(path.join(root, file), "utf8"));
    return texts.get(file);
  };
  const broken: string[] = [];
  for (const page of pages) {
    const text = read(page) ?? "";
    for (const link of linksOf(text, page)) {
      const { target } = link;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue; // http:, mailto:, …
      const [rawFile = "", anchor] = target.split("#", 2);
      const file = decodeURIComponent(rawFile);
      const resolved = file === "" ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
      const where = `${page}:${link.line}: ${target}`;
      if (resolved.startsWith("..")) {
        broken.push(`${where}: points outside the project`);
        continue;
      }
      const absolute = path.join(root, resolved);
      if (!existsSync(absolute)) {
        broken.push(`${where}: no such file ${resolved}`);
        continue;
      }
      if (anchor === undefined || anchor === "") continue;
      if (statSync(absolute).isDirectory() || !resolved.endsWith(".md")) {
        broken.push(`${where}: an anchor on something that is not a Markdown page`);
        continue;
      }
      if (!anchorsOf(read(resolved) ?? "").has(decodeURIComponent(anchor))) broken.push(`${where}: no heading #${anchor} in ${resolved}`);
    }
  }
  return broken;
}

if (process.argv[1]?.endsWith("docs-links.ts")) {
  const broken = brokenLinks();
  for (const b of broken) console.error(b);
  console.log(broken.length === 0 ? `links: all resolve (${documentationPages().join(", ")})` : `links: ${broken.length} broken`);
  process.exit(broken.length === 0 ? 0 : 1);
}

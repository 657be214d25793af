/** A form as a browser posts it: a list value is one field per item, numbers as they are typed. */
export function form(fields: Record<string, string | number | readonly (string | number)[]>): FormData {
  const f = new FormData();
  for (const [name, value] of Object.entries(fields)) for (const one of Array.isArray(value) ? value : [value]) f.append(name, String(one));
  return f;
}

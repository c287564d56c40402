// This module is on the ground floor: the CLI, the config and the keys read lists with it.

/**
 * The items of a comma-separated list, each trimmed (`orders:read, orders:cancel`). Throws an
 * Error naming `option` when an item is empty (`a,,b`, `a,`, or nothing at all), since an empty
 * item is a slip of the keyboard, not a choice.
 */
export function commaList(option: string, value: string, what: string): string[] {
  const items = value.split(',').map((item) => item.trim());
  if (items.every((item) => item === '')) throw new Error(`${option} must name at least one ${what}, got "${value}"`);
  if (items.includes('')) throw new Error(`${option} has an empty ${what} between commas, got "${value}"`);
  return items;
}

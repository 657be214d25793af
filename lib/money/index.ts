// The door to prices and money: exact decimals per unit read into picos, and a reservation's money
// in whole micros rounded up once (integers only; the dashboard's client components use it too).
export {
  dearestPrice,
  describeParts,
  describePrice,
  formatPrice,
  formatPriceDecimal,
  formatPricePerMillion,
  microsOfUnits,
  moneyOf,
  parsePrice,
  PRICE_DECIMALS,
  type ParsedPrice,
} from "./price";

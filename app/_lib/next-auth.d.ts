import "next-auth";

declare module "next-auth" {
  // authorize() hands the session version to the jwt callback, which stores it in the token.
  interface User {
    sessionVersion?: number;
  }
}

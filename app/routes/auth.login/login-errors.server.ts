// The login form's error messages, from what Shopify's login helper reported.
import { LoginErrorType, type LoginError } from "@shopify/shopify-app-remix/server";

export function loginErrorMessage(errors: LoginError): { shop?: string } {
  if (errors.shop === LoginErrorType.MissingShop) return { shop: "Enter your shop domain to log in." };
  if (errors.shop === LoginErrorType.InvalidShop) return { shop: "Enter a valid shop domain, such as my-shop.myshopify.com." };
  return {};
}

// The payment request as a QR code, drawn on the server as SVG so the page needs no
// script or image service to show it.
import QRCode from "qrcode";

export function paymentQrSvg(paymentUri: string): Promise<string> {
  return QRCode.toString(paymentUri, { type: "svg", margin: 1, errorCorrectionLevel: "M" });
}

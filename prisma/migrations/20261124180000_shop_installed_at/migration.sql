-- When the app was last installed: an app/uninstalled webhook triggered before it is about an earlier install.
ALTER TABLE "Shop" ADD COLUMN "installedAt" DATETIME;

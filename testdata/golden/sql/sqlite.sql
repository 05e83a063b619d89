-- directory/memberships list
SELECT t."membership_identifier", t."group_identifier", t."organization_identifier", t."user_identifier", t."membership_function", t."membership_effective", t."membership_expiry" FROM "memberships" AS t WHERE `t`.`organization_identifier` = ? ORDER BY `t`.`membership_identifier` LIMIT 20;
-- directory/memberships search
SELECT t."membership_identifier" FROM "memberships" AS t ORDER BY `t`.`membership_identifier` LIMIT 20;
-- directory/memberships count with every filter
SELECT count(*) FROM "memberships" AS t WHERE `t`.`group_identifier` = ? AND `t`.`organization_identifier` = ? AND `t`.`user_identifier` = ? AND `t`.`membership_function` = ? AND (`t`.`membership_effective` >= ? AND `t`.`membership_effective` < ?) AND (`t`.`membership_expiry` >= ? AND `t`.`membership_expiry` < ?);
-- directory/memberships insert
INSERT INTO `memberships` (`group_identifier`,`membership_effective`,`membership_expiry`,`membership_function`,`membership_identifier`,`organization_identifier`,`user_identifier`) VALUES (?,?,?,?,?,?,?);

-- directory/memberships-deletions list
SELECT t."deletion_identifier", t."group_identifier", t."membership_identifier", t."organization_identifier", t."user_identifier", t."deletion_when" FROM "membership_deletions" AS t WHERE `t`.`organization_identifier` = ? ORDER BY `t`.`deletion_identifier` LIMIT 20;
-- directory/memberships-deletions search
SELECT t."deletion_identifier" FROM "membership_deletions" AS t ORDER BY `t`.`deletion_identifier` LIMIT 20;
-- directory/memberships-deletions count with every filter
SELECT count(*) FROM "membership_deletions" AS t WHERE `t`.`group_identifier` = ? AND `t`.`membership_identifier` = ? AND `t`.`organization_identifier` = ? AND `t`.`user_identifier` = ? AND (`t`.`deletion_when` >= ? AND `t`.`deletion_when` < ?);
-- directory/memberships-deletions insert
INSERT INTO `membership_deletions` (`deletion_identifier`,`deletion_when`,`group_identifier`,`membership_identifier`,`organization_identifier`,`user_identifier`) VALUES (?,?,?,?,?,?);

-- directory/memberships-reasons list
SELECT t."reason_identifier", t."membership_identifier", t."created_by", t."modified_by", t."last_change_type", t."person_occupation", t."reason_subtype", t."reason_type", t."created", t."modified", t."reason_effective", t."reason_expiry" FROM "membership_reasons" AS t WHERE `t`.`membership_identifier` IN (SELECT x."membership_identifier" FROM "memberships" AS x WHERE `x`.`organization_identifier` = ?) ORDER BY `t`.`reason_identifier` LIMIT 20;
-- directory/memberships-reasons search
SELECT t."reason_identifier" FROM "membership_reasons" AS t ORDER BY `t`.`reason_identifier` LIMIT 20;
-- directory/memberships-reasons count with every filter
SELECT count(*) FROM "membership_reasons" AS t WHERE `t`.`membership_identifier` = ? AND `t`.`created_by` = ? AND `t`.`modified_by` = ? AND `t`.`last_change_type` = ? AND `t`.`person_occupation` LIKE ? ESCAPE '\' AND `t`.`reason_subtype` = ? AND `t`.`reason_type` = ? AND (`t`.`created` >= ? AND `t`.`created` < ?) AND (`t`.`modified` >= ? AND `t`.`modified` < ?) AND (`t`.`reason_effective` >= ? AND `t`.`reason_effective` < ?) AND (`t`.`reason_expiry` >= ? AND `t`.`reason_expiry` < ?);
-- directory/memberships-reasons insert
INSERT INTO `membership_reasons` (`created`,`created_by`,`last_change_type`,`membership_identifier`,`modified`,`modified_by`,`person_occupation`,`reason_effective`,`reason_expiry`,`reason_identifier`,`reason_subtype`,`reason_type`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?);

-- directory/people list
SELECT t."person_identifier", t."user_identifier", t."organization_identifier", t."created_by", t."modified_by", t."billing_address_identifier", t."home_address_identifier", t."shipping_address_identifier", t."work_address_identifier", t."employer_group_identifier", t."industry_item_identifier", t."membership_status_item_identifier", t."occupation_standard_identifier", t."candidate_is_actively_seeking", t."candidate_is_willing_to_relocate", t."email_alternate_enabled", t."email_enabled", t."is_administrator", t."is_archived", t."is_learner", t."is_operator", t."marketing_email_enabled", t."access_revoked_by", t."account_status_name", t."candidate_linked_in_url", t."candidate_occupation_list", t."citizenship", t."consent_consultation", t."consent_to_share", t."credentialing_country", t."education_level", t."emergency_contact_name", t."emergency_contact_phone", t."emergency_contact_relationship", t."employee_type", t."employee_union", t."first_language", t."full_name", t."gender", t."immigration_applicant", t."immigration_category", t."immigration_destination", t."immigration_disability", t."immigration_number", t."jobs_approved_by", t."job_title", t."language", t."person_code", t."phone", t."phone_fax", t."phone_home", t."phone_other", t."phone_work", t."referrer", t."referrer_other", t."region", t."shipping_preference", t."social_insurance_number", t."tradeworker_number", t."user_access_granted_by", t."user_approve_reason", t."web_site_url", t."candidate_completion_profile_percent", t."candidate_completion_resume_percent", t."custom_key", t."membership_status_item_key", t."welcome_emails_sent_to_user", t."access_revoked", t."account_review_completed", t."account_review_queued", t."created", t."jobs_approved", t."last_authenticated", t."modified", t."user_access_granted", t."when_archived", t."when_unarchived", t."birthdate", t."immigration_landing_date", t."member_end_date", t."member_start_date" FROM "people" AS t WHERE `t`.`organization_identifier` = ? ORDER BY `t`.`full_name`,`t`.`person_identifier` LIMIT 20;
-- directory/people search
SELECT t."person_identifier" FROM "people" AS t ORDER BY `t`.`full_name`,`t`.`person_identifier` LIMIT 20;
-- directory/people count with every filter
SELECT count(*) FROM "people" AS t WHERE `t`.`user_identifier` = ? AND `t`.`organization_identifier` = ? AND `t`.`created_by` = ? AND `t`.`modified_by` = ? AND `t`.`billing_address_identifier` = ? AND `t`.`home_address_identifier` = ? AND `t`.`shipping_address_identifier` = ? AND `t`.`work_address_identifier` = ? AND `t`.`employer_group_identifier` = ? AND `t`.`industry_item_identifier` = ? AND `t`.`membership_status_item_identifier` = ? AND `t`.`occupation_standard_identifier` = ? AND `t`.`candidate_is_actively_seeking` = ? AND `t`.`candidate_is_willing_to_relocate` = ? AND `t`.`email_alternate_enabled` = ? AND `t`.`email_enabled` = ? AND `t`.`is_administrator` = ? AND `t`.`is_archived` = ? AND `t`.`is_learner` = ? AND `t`.`is_operator` = ? AND `t`.`marketing_email_enabled` = ? AND `t`.`access_revoked_by` = ? AND `t`.`account_status_name` = ? AND `t`.`candidate_linked_in_url` = ? AND `t`.`candidate_occupation_list` = ? AND `t`.`citizenship` = ? AND `t`.`consent_consultation` = ? AND `t`.`consent_to_share` = ? AND `t`.`credentialing_country` = ? AND `t`.`education_level` = ? AND `t`.`emergency_contact_name` LIKE ? ESCAPE '\' AND `t`.`emergency_contact_phone` = ? AND `t`.`emergency_contact_relationship` = ? AND `t`.`employee_union` = ? AND `t`.`first_language` = ? AND `t`.`full_name` LIKE ? ESCAPE '\' AND `t`.`gender` = ? AND `t`.`immigration_applicant` = ? AND `t`.`immigration_category` = ? AND `t`.`immigration_destination` = ? AND `t`.`immigration_disability` = ? AND `t`.`immigration_number` = ? AND `t`.`jobs_approved_by` = ? AND `t`.`job_title` LIKE ? ESCAPE '\' AND `t`.`language` = ? AND `t`.`person_code` = ? AND `t`.`phone` = ? AND `t`.`phone_fax` = ? AND `t`.`phone_home` = ? AND `t`.`phone_other` = ? AND `t`.`phone_work` = ? AND `t`.`referrer` = ? AND `t`.`referrer_other` = ? AND `t`.`region` = ? AND `t`.`shipping_preference` = ? AND `t`.`social_insurance_number` = ? AND `t`.`tradeworker_number` = ? AND `t`.`user_access_granted_by` = ? AND `t`.`user_approve_reason` = ? AND `t`.`web_site_url` = ? AND `t`.`candidate_completion_profile_percent` = ? AND `t`.`candidate_completion_resume_percent` = ? AND `t`.`custom_key` = ? AND `t`.`membership_status_item_key` = ? AND `t`.`welcome_emails_sent_to_user` = ? AND (`t`.`access_revoked` >= ? AND `t`.`access_revoked` < ?) AND (`t`.`account_review_completed` >= ? AND `t`.`account_review_completed` < ?) AND (`t`.`account_review_queued` >= ? AND `t`.`account_review_queued` < ?) AND (`t`.`created` >= ? AND `t`.`created` < ?) AND (`t`.`jobs_approved` >= ? AND `t`.`jobs_approved` < ?) AND (`t`.`last_authenticated` >= ? AND `t`.`last_authenticated` < ?) AND (`t`.`modified` >= ? AND `t`.`modified` < ?) AND (`t`.`user_access_granted` >= ? AND `t`.`user_access_granted` < ?) AND (`t`.`when_archived` >= ? AND `t`.`when_archived` < ?) AND (`t`.`when_unarchived` >= ? AND `t`.`when_unarchived` < ?) AND (`t`.`birthdate` >= ? AND `t`.`birthdate` < ?) AND (`t`.`immigration_landing_date` >= ? AND `t`.`immigration_landing_date` < ?) AND (`t`.`member_end_date` >= ? AND `t`.`member_end_date` < ?) AND (`t`.`member_start_date` >= ? AND `t`.`member_start_date` < ?);
-- directory/people insert
INSERT INTO `people` (`access_revoked`,`access_revoked_by`,`account_review_completed`,`account_review_queued`,`account_status_name`,`billing_address_identifier`,`birthdate`,`candidate_completion_profile_percent`,`candidate_completion_resume_percent`,`candidate_is_actively_seeking`,`candidate_is_willing_to_relocate`,`candidate_linked_in_url`,`candidate_occupation_list`,`citizenship`,`consent_consultation`,`consent_to_share`,`created`,`created_by`,`credentialing_country`,`custom_key`,`education_level`,`email_alternate_enabled`,`email_enabled`,`emergency_contact_name`,`emergency_contact_phone`,`emergency_contact_relationship`,`employee_type`,`employee_union`,`employer_group_identifier`,`first_language`,`full_name`,`gender`,`home_address_identifier`,`immigration_applicant`,`immigration_category`,`immigration_destination`,`immigration_disability`,`immigration_landing_date`,`immigration_number`,`industry_item_identifier`,`is_administrator`,`is_archived`,`is_learner`,`is_operator`,`job_title`,`jobs_approved`,`jobs_approved_by`,`language`,`last_authenticated`,`marketing_email_enabled`,`member_end_date`,`member_start_date`,`membership_status_item_identifier`,`membership_status_item_key`,`modified`,`modified_by`,`occupation_standard_identifier`,`organization_identifier`,`person_code`,`person_identifier`,`phone`,`phone_fax`,`phone_home`,`phone_other`,`phone_work`,`referrer`,`referrer_other`,`region`,`shipping_address_identifier`,`shipping_preference`,`social_insurance_number`,`tradeworker_number`,`user_access_granted`,`user_access_granted_by`,`user_approve_reason`,`user_identifier`,`web_site_url`,`welcome_emails_sent_to_user`,`when_archived`,`when_unarchived`,`work_address_identifier`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?);

-- directory/people-addresses list
SELECT t."address_identifier", t."city", t."country", t."description", t."postal_code", t."province", t."street1", t."street2" FROM "person_addresses" AS t ORDER BY `t`.`address_identifier` LIMIT 20;
-- directory/people-addresses search
SELECT t."address_identifier" FROM "person_addresses" AS t ORDER BY `t`.`address_identifier` LIMIT 20;
-- directory/people-addresses count with every filter
SELECT count(*) FROM "person_addresses" AS t WHERE `t`.`city` LIKE ? ESCAPE '\' AND `t`.`country` = ? AND `t`.`description` LIKE ? ESCAPE '\' AND `t`.`postal_code` = ? AND `t`.`province` = ? AND `t`.`street1` LIKE ? ESCAPE '\' AND `t`.`street2` LIKE ? ESCAPE '\';
-- directory/people-addresses insert
INSERT INTO `person_addresses` (`address_identifier`,`city`,`country`,`description`,`postal_code`,`province`,`street1`,`street2`) VALUES (?,?,?,?,?,?,?,?);

-- directory/people-fields list
SELECT t."field_identifier", t."organization_identifier", t."user_identifier", t."field_name", t."field_value", t."field_sequence" FROM "person_fields" AS t ORDER BY `t`.`field_identifier` LIMIT 20;
-- directory/people-fields search
SELECT t."field_identifier" FROM "person_fields" AS t ORDER BY `t`.`field_identifier` LIMIT 20;
-- directory/people-fields count with every filter
SELECT count(*) FROM "person_fields" AS t WHERE `t`.`organization_identifier` = ? AND `t`.`user_identifier` = ? AND `t`.`field_name` = ? AND `t`.`field_value` = ? AND `t`.`field_sequence` = ?;
-- directory/people-fields insert
INSERT INTO `person_fields` (`field_identifier`,`field_name`,`field_sequence`,`field_value`,`organization_identifier`,`user_identifier`) VALUES (?,?,?,?,?,?);

-- platform/actions list
SELECT t."action_identifier", t."navigation_parent_action_identifier", t."permission_parent_action_identifier", t."action_category", t."action_icon", t."action_list", t."action_name", t."action_name_short", t."action_type", t."action_url", t."authorization_requirement", t."controller_path", t."help_url" FROM "platform_actions" AS t ORDER BY `t`.`action_identifier` LIMIT 20;
-- platform/actions search
SELECT t."action_identifier" FROM "platform_actions" AS t ORDER BY `t`.`action_identifier` LIMIT 20;
-- platform/actions count with every filter
SELECT count(*) FROM "platform_actions" AS t WHERE `t`.`navigation_parent_action_identifier` = ? AND `t`.`permission_parent_action_identifier` = ? AND `t`.`action_category` = ? AND `t`.`action_icon` = ? AND `t`.`action_list` = ? AND `t`.`action_name` LIKE ? ESCAPE '\' AND `t`.`action_name_short` LIKE ? ESCAPE '\' AND `t`.`action_type` = ? AND `t`.`action_url` = ? AND `t`.`authorization_requirement` = ? AND `t`.`controller_path` = ? AND `t`.`help_url` = ?;
-- platform/actions insert
INSERT INTO `platform_actions` (`action_category`,`action_icon`,`action_identifier`,`action_list`,`action_name`,`action_name_short`,`action_type`,`action_url`,`authorization_requirement`,`controller_path`,`help_url`,`navigation_parent_action_identifier`,`permission_parent_action_identifier`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?);

-- platform/partitions-fields list
SELECT t."setting_identifier", t."setting_name", t."setting_value" FROM "partition_fields" AS t ORDER BY `t`.`setting_identifier` LIMIT 20;
-- platform/partitions-fields search
SELECT t."setting_identifier" FROM "partition_fields" AS t ORDER BY `t`.`setting_identifier` LIMIT 20;
-- platform/partitions-fields count with every filter
SELECT count(*) FROM "partition_fields" AS t WHERE `t`.`setting_name` = ? AND `t`.`setting_value` = ?;
-- platform/partitions-fields insert
INSERT INTO `partition_fields` (`setting_identifier`,`setting_name`,`setting_value`) VALUES (?,?,?);

-- progress/achievements list
SELECT t."achievement_identifier", t."organization_identifier", t."achievement_is_enabled", t."achievement_reporting_disabled", t."has_badge_image", t."achievement_description", t."achievement_label", t."achievement_title", t."achievement_type", t."badge_image_url", t."certificate_layout_code", t."expiration_lifetime_unit", t."expiration_type", t."expiration_lifetime_quantity", t."expiration_fixed_date" FROM "achievements" AS t WHERE `t`.`organization_identifier` = ? ORDER BY `t`.`achievement_identifier` LIMIT 20;
-- progress/achievements search
SELECT t."achievement_identifier" FROM "achievements" AS t ORDER BY `t`.`achievement_identifier` LIMIT 20;
-- progress/achievements count with every filter
SELECT count(*) FROM "achievements" AS t WHERE `t`.`organization_identifier` = ? AND `t`.`achievement_is_enabled` = ? AND `t`.`achievement_reporting_disabled` = ? AND `t`.`has_badge_image` = ? AND `t`.`achievement_description` LIKE ? ESCAPE '\' AND `t`.`achievement_label` LIKE ? ESCAPE '\' AND `t`.`achievement_title` LIKE ? ESCAPE '\' AND `t`.`achievement_type` = ? AND `t`.`badge_image_url` = ? AND `t`.`certificate_layout_code` = ? AND `t`.`expiration_lifetime_unit` = ? AND `t`.`expiration_type` = ? AND `t`.`expiration_lifetime_quantity` = ? AND (`t`.`expiration_fixed_date` >= ? AND `t`.`expiration_fixed_date` < ?);
-- progress/achievements insert
INSERT INTO `achievements` (`achievement_description`,`achievement_identifier`,`achievement_is_enabled`,`achievement_label`,`achievement_reporting_disabled`,`achievement_title`,`achievement_type`,`badge_image_url`,`certificate_layout_code`,`expiration_fixed_date`,`expiration_lifetime_quantity`,`expiration_lifetime_unit`,`expiration_type`,`has_badge_image`,`organization_identifier`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?);

-- progress/gradebooks list
SELECT t."gradebook_identifier", t."achievement_identifier", t."event_identifier", t."framework_identifier", t."organization_identifier", t."period_identifier", t."is_locked", t."gradebook_title", t."gradebook_type", t."last_change_type", t."last_change_user", t."reference", t."gradebook_created", t."last_change_time" FROM "gradebooks" AS t WHERE `t`.`organization_identifier` = ? ORDER BY `t`.`gradebook_title`,`t`.`gradebook_identifier` LIMIT 20;
-- progress/gradebooks search
SELECT t."gradebook_identifier", t."gradebook_title", t."gradebook_created", (SELECT COUNT(*) FROM "enrollments" AS l3 WHERE l3."gradebook_identifier" = t."gradebook_identifier") AS "gradebook_enrollment_count", (SELECT l4."event_identifier" FROM "events" AS l4 WHERE l4."event_identifier" = t."event_identifier" LIMIT 1) AS "class_identifier", (SELECT l5."event_title" FROM "events" AS l5 WHERE l5."event_identifier" = t."event_identifier" LIMIT 1) AS "class_title", (SELECT l6."event_start" FROM "events" AS l6 WHERE l6."event_identifier" = t."event_identifier" LIMIT 1) AS "class_started", (SELECT l7."event_end" FROM "events" AS l7 WHERE l7."event_identifier" = t."event_identifier" LIMIT 1) AS "class_ended", t."achievement_identifier", (SELECT l9."achievement_title" FROM "achievements" AS l9 WHERE l9."achievement_identifier" = t."achievement_identifier" LIMIT 1) AS "achievement_title", (SELECT COUNT(*) FROM "credentials" AS l10 WHERE l10."achievement_identifier" = t."achievement_identifier") AS "achievement_count_granted" FROM "gradebooks" AS t ORDER BY `t`.`gradebook_title`,`t`.`gradebook_identifier` LIMIT 20;
-- progress/gradebooks count with every filter
SELECT count(*) FROM "gradebooks" AS t WHERE `t`.`achievement_identifier` = ? AND `t`.`framework_identifier` = ? AND `t`.`organization_identifier` = ? AND `t`.`period_identifier` = ? AND `t`.`is_locked` = ? AND `t`.`gradebook_title` LIKE ? ESCAPE '\' AND `t`.`gradebook_type` = ? AND `t`.`last_change_type` = ? AND `t`.`last_change_user` = ? AND `t`.`reference` = ? AND `t`.`event_identifier` = ? AND `t`.`event_identifier` IN (SELECT x."event_identifier" FROM "event_instructors" AS x WHERE `x`.`instructor_identifier` = ?) AND `t`.`event_identifier` IN (SELECT x."event_identifier" FROM "events" AS x WHERE `x`.`event_title` LIKE ? ESCAPE '\') AND `t`.`event_identifier` IN (SELECT x."event_identifier" FROM "events" AS x WHERE `x`.`event_start` >= ?) AND `t`.`event_identifier` IN (SELECT x."event_identifier" FROM "events" AS x WHERE `x`.`event_start` < ?) AND `t`.`gradebook_created` >= ? AND `t`.`gradebook_created` < ? AND `t`.`last_change_time` >= ? AND `t`.`last_change_time` < ?;
-- progress/gradebooks insert
INSERT INTO `gradebooks` (`achievement_identifier`,`event_identifier`,`framework_identifier`,`gradebook_created`,`gradebook_identifier`,`gradebook_title`,`gradebook_type`,`is_locked`,`last_change_time`,`last_change_type`,`last_change_user`,`organization_identifier`,`period_identifier`,`reference`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?);

-- security/permissions list
SELECT t."permission_identifier", t."group_identifier", t."object_identifier", t."organization_identifier", t."permission_granted_by", t."allow_administrate", t."allow_configure", t."allow_create", t."allow_delete", t."allow_execute", t."allow_read", t."allow_trial_access", t."allow_write", t."object_type", t."permission_mask", t."permission_granted", (SELECT l16."group_slug" FROM "groups" AS l16 WHERE l16."group_identifier" = t."group_identifier" LIMIT 1) AS "role_slug" FROM "permissions" AS t ORDER BY `t`.`permission_identifier` LIMIT 20;
-- security/permissions search
SELECT t."permission_identifier" FROM "permissions" AS t ORDER BY `t`.`permission_identifier` LIMIT 20;
-- security/permissions count with every filter
SELECT count(*) FROM "permissions" AS t WHERE `t`.`group_identifier` = ? AND `t`.`object_identifier` = ? AND `t`.`organization_identifier` = ? AND `t`.`permission_granted_by` = ? AND `t`.`allow_administrate` = ? AND `t`.`allow_configure` = ? AND `t`.`allow_create` = ? AND `t`.`allow_delete` = ? AND `t`.`allow_execute` = ? AND `t`.`allow_read` = ? AND `t`.`allow_trial_access` = ? AND `t`.`allow_write` = ? AND `t`.`object_type` = ? AND `t`.`permission_mask` = ? AND (`t`.`permission_granted` >= ? AND `t`.`permission_granted` < ?);
-- security/permissions insert
INSERT INTO `permissions` (`allow_administrate`,`allow_configure`,`allow_create`,`allow_delete`,`allow_execute`,`allow_read`,`allow_trial_access`,`allow_write`,`group_identifier`,`object_identifier`,`object_type`,`organization_identifier`,`permission_granted`,`permission_granted_by`,`permission_identifier`,`permission_mask`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?);

-- security/users list
SELECT t."user_identifier", t."access_granted_to_cmds", t."multi_factor_authentication", t."default_password", t."email", t."email_alternate", t."email_verified", t."first_name", t."full_name", t."honorific", t."image_url", t."initials", t."last_name", t."login_organization_code", t."middle_name", t."multi_factor_authentication_code", t."o_auth_provider_user_id", t."old_user_password_hash", t."phone_mobile", t."soundex_first_name", t."soundex_last_name", t."time_zone", t."user_password_hash", t."primary_login_method", t."secondary_login_method", t."user_password_change_requested", t."account_cloaked", t."default_password_expired", t."user_license_accepted", t."user_password_changed", t."user_password_expired", t."utc_archived", t."utc_unarchived" FROM "users" AS t WHERE `t`.`user_identifier` IN (SELECT x."user_identifier" FROM "people" AS x WHERE `x`.`organization_identifier` = ?) ORDER BY `t`.`full_name`,`t`.`user_identifier` LIMIT 20;
-- security/users search
SELECT t."user_identifier" FROM "users" AS t ORDER BY `t`.`full_name`,`t`.`user_identifier` LIMIT 20;
-- security/users count with every filter
SELECT count(*) FROM "users" AS t WHERE `t`.`access_granted_to_cmds` = ? AND `t`.`multi_factor_authentication` = ? AND `t`.`default_password` = ? AND `t`.`email` = ? AND `t`.`email_alternate` = ? AND `t`.`email_verified` = ? AND `t`.`first_name` LIKE ? ESCAPE '\' AND `t`.`full_name` LIKE ? ESCAPE '\' AND `t`.`honorific` = ? AND `t`.`image_url` = ? AND `t`.`initials` = ? AND `t`.`last_name` LIKE ? ESCAPE '\' AND `t`.`login_organization_code` = ? AND `t`.`middle_name` LIKE ? ESCAPE '\' AND `t`.`multi_factor_authentication_code` = ? AND `t`.`o_auth_provider_user_id` = ? AND `t`.`old_user_password_hash` = ? AND `t`.`phone_mobile` = ? AND `t`.`soundex_first_name` = ? AND `t`.`soundex_last_name` = ? AND `t`.`time_zone` = ? AND `t`.`user_password_hash` = ? AND `t`.`primary_login_method` = ? AND `t`.`secondary_login_method` = ? AND `t`.`user_password_change_requested` = ? AND (`t`.`account_cloaked` >= ? AND `t`.`account_cloaked` < ?) AND (`t`.`default_password_expired` >= ? AND `t`.`default_password_expired` < ?) AND (`t`.`user_license_accepted` >= ? AND `t`.`user_license_accepted` < ?) AND (`t`.`user_password_changed` >= ? AND `t`.`user_password_changed` < ?) AND (`t`.`user_password_expired` >= ? AND `t`.`user_password_expired` < ?) AND (`t`.`utc_archived` >= ? AND `t`.`utc_archived` < ?) AND (`t`.`utc_unarchived` >= ? AND `t`.`utc_unarchived` < ?);
-- security/users insert
INSERT INTO `users` (`access_granted_to_cmds`,`account_cloaked`,`default_password`,`default_password_expired`,`email`,`email_alternate`,`email_verified`,`first_name`,`full_name`,`honorific`,`image_url`,`initials`,`last_name`,`login_organization_code`,`middle_name`,`multi_factor_authentication`,`multi_factor_authentication_code`,`o_auth_provider_user_id`,`old_user_password_hash`,`phone_mobile`,`primary_login_method`,`secondary_login_method`,`soundex_first_name`,`soundex_last_name`,`time_zone`,`user_identifier`,`user_license_accepted`,`user_password_change_requested`,`user_password_changed`,`user_password_expired`,`user_password_hash`,`utc_archived`,`utc_unarchived`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?);

-- security/users-comments list
SELECT t."comment_identifier", t."comment_created_by", t."organization_identifier", t."user_identifier", t."comment_text", t."comment_created" FROM "user_comments" AS t ORDER BY `t`.`comment_identifier` LIMIT 20;
-- security/users-comments search
SELECT t."comment_identifier" FROM "user_comments" AS t ORDER BY `t`.`comment_identifier` LIMIT 20;
-- security/users-comments count with every filter
SELECT count(*) FROM "user_comments" AS t WHERE `t`.`comment_created_by` = ? AND `t`.`organization_identifier` = ? AND `t`.`user_identifier` = ? AND `t`.`comment_text` LIKE ? ESCAPE '\' AND (`t`.`comment_created` >= ? AND `t`.`comment_created` < ?);
-- security/users-comments insert
INSERT INTO `user_comments` (`comment_created`,`comment_created_by`,`comment_identifier`,`comment_text`,`organization_identifier`,`user_identifier`) VALUES (?,?,?,?,?,?);

-- security/users-connections list
SELECT t."from_user_identifier", t."to_user_identifier", t."is_leader", t."is_manager", t."is_supervisor", t."is_validator", t."connected" FROM "user_connections" AS t WHERE `t`.`from_user_identifier` IN (SELECT x."user_identifier" FROM "people" AS x WHERE `x`.`organization_identifier` = ?) AND `t`.`to_user_identifier` IN (SELECT x."user_identifier" FROM "people" AS x WHERE `x`.`organization_identifier` = ?) ORDER BY `t`.`from_user_identifier`,`t`.`to_user_identifier` LIMIT 20;
-- security/users-connections search
SELECT t."from_user_identifier", t."to_user_identifier" FROM "user_connections" AS t ORDER BY `t`.`from_user_identifier`,`t`.`to_user_identifier` LIMIT 20;
-- security/users-connections count with every filter
SELECT count(*) FROM "user_connections" AS t WHERE `t`.`is_manager` = ? AND `t`.`is_supervisor` = ? AND `t`.`is_validator` = ? AND (`t`.`connected` >= ? AND `t`.`connected` < ?);
-- security/users-connections insert
INSERT INTO `user_connections` (`connected`,`from_user_identifier`,`is_leader`,`is_manager`,`is_supervisor`,`is_validator`,`to_user_identifier`) VALUES (?,?,?,?,?,?,?);

-- security/users-fields list
SELECT t."setting_identifier", t."organization_identifier", t."user_identifier", t."name", t."value_json", t."value_type" FROM "user_fields" AS t ORDER BY `t`.`setting_identifier` LIMIT 20;
-- security/users-fields search
SELECT t."setting_identifier" FROM "user_fields" AS t ORDER BY `t`.`setting_identifier` LIMIT 20;
-- security/users-fields count with every filter
SELECT count(*) FROM "user_fields" AS t WHERE `t`.`organization_identifier` = ? AND `t`.`user_identifier` = ? AND `t`.`name` = ? AND `t`.`value_json` = ? AND `t`.`value_type` = ?;
-- security/users-fields insert
INSERT INTO `user_fields` (`name`,`organization_identifier`,`setting_identifier`,`user_identifier`,`value_json`,`value_type`) VALUES (?,?,?,?,?,?);

-- test/widgets list
SELECT t."widget_identifier", t."organization_identifier", t."widget_code", t."widget_title", t."widget_enabled", t."widget_size", t."widget_made", t."widget_email", t."part_identifier", (SELECT l9."part_name" FROM "widget_parts" AS l9 WHERE l9."part_identifier" = t."part_identifier" LIMIT 1) AS "part_name" FROM "widgets" AS t WHERE `t`.`organization_identifier` = ? ORDER BY `t`.`widget_code`,`t`.`widget_identifier` LIMIT 20;
-- test/widgets search
SELECT t."widget_identifier", t."widget_code", (SELECT COUNT(*) FROM "widget_parts" AS l2 WHERE l2."widget_identifier" = t."widget_identifier") AS "part_count" FROM "widgets" AS t ORDER BY `t`.`widget_code`,`t`.`widget_identifier` LIMIT 20;
-- test/widgets count with every filter
SELECT count(*) FROM "widgets" AS t WHERE `t`.`organization_identifier` = ? AND `t`.`widget_code` = ? AND `t`.`widget_title` LIKE ? ESCAPE '\' AND `t`.`widget_enabled` = ? AND `t`.`widget_size` = ? AND (`t`.`widget_made` >= ? AND `t`.`widget_made` < ?) AND `t`.`widget_email` = ? AND `t`.`part_identifier` = ? AND `t`.`widget_made` >= ? AND `t`.`widget_made` < ? AND `t`.`part_identifier` IN (SELECT x."part_identifier" FROM "widget_parts" AS x WHERE `x`.`part_name` LIKE ? ESCAPE '\');
-- test/widgets insert
INSERT INTO `widgets` (`organization_identifier`,`part_identifier`,`widget_code`,`widget_email`,`widget_enabled`,`widget_identifier`,`widget_made`,`widget_size`,`widget_title`) VALUES (?,?,?,?,?,?,?,?,?);


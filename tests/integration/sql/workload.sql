-- Workload for the live MariaDB decode test: every column type MariaDB offers,
-- boundary values, updates, deletes, DDL between row events, other row images
-- and compressed events. Our own; run against a throwaway sandbox.
SET timestamp = 1700000000;
SET time_zone = '+00:00';
DROP DATABASE IF EXISTS live;
CREATE DATABASE live DEFAULT CHARACTER SET utf8mb4;
USE live;

CREATE TABLE ints (
  id INT PRIMARY KEY,
  t TINYINT, tu TINYINT UNSIGNED, s SMALLINT, su SMALLINT UNSIGNED,
  m MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED,
  b BIGINT, bu BIGINT UNSIGNED, bo BOOLEAN
);
INSERT INTO ints VALUES
  (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
  (2, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615, 1),
  (3, 127, 128, 32767, 32768, 8388607, 8388608, 2147483647, 2147483648, 9223372036854775807, 9223372036854775808, 0),
  (4, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, NULL),
  (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE ints SET t = t - 1, bu = 42 WHERE id = 3;
DELETE FROM ints WHERE id = 4;

CREATE TABLE nums (
  id INT PRIMARY KEY,
  f FLOAT, d DOUBLE,
  d1 DECIMAL(1,0), d2 DECIMAL(4,4), d3 DECIMAL(9,2), d4 DECIMAL(10,0), d5 DECIMAL(18,9),
  d6 DECIMAL(27,13), d7 DECIMAL(38,0), d8 DECIMAL(65,30), d9 DECIMAL(65,0), du DECIMAL(10,3) UNSIGNED,
  b1 BIT(1), b5 BIT(5), b8 BIT(8), b13 BIT(13), b33 BIT(33), b64 BIT(64)
);
INSERT INTO nums VALUES
  (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, b'0', b'0', b'0', b'0', b'0', b'0'),
  (2, 1.5, -2.25, 9, 0.9999, 9999999.99, 9999999999, 999999999.999999999,
   99999999999999.9999999999999, 99999999999999999999999999999999999999,
   99999999999999999999999999999999999.999999999999999999999999999999,
   99999999999999999999999999999999999999999999999999999999999999999, 9999999.999,
   b'1', b'10101', b'11111111', b'1010101010101', b'100000000000000000000000000000001', b'1111111111111111111111111111111111111111111111111111111111111111'),
  (3, -3.4e38, 1.7976931348623157e308, -9, -0.0001, -1234567.89, -1, -0.000000001,
   -12345678901234.1234567890123, -12345678901234567890123456789012345678,
   -0.000000000000000000000000000001, -1, 0.001,
   b'0', b'1', b'10000000', b'1', b'1', b'1000000000000000000000000000000000000000000000000000000000000000'),
  (4, 1e-30, 2.2250738585072014e-308, 1, 0.5, 0.05, 100, 123.456, 0.0000000000001, 1, 1.5, 100000, 0,
   NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE nums SET d8 = -d8, f = 3.25 WHERE id = 2;

CREATE TABLE times (
  id INT PRIMARY KEY,
  dt DATE, y YEAR,
  t0 TIME, t1 TIME(1), t3 TIME(3), t6 TIME(6),
  dt0 DATETIME, dt2 DATETIME(2), dt4 DATETIME(4), dt6 DATETIME(6),
  ts0 TIMESTAMP NULL DEFAULT NULL, ts3 TIMESTAMP(3) NULL DEFAULT NULL, ts6 TIMESTAMP(6) NULL DEFAULT NULL
);
SET SESSION sql_mode = '';
INSERT INTO times VALUES
  (1, '2024-02-29', 2024, '12:34:56', '-00:00:00.5', '838:59:59.999', '-838:59:59.000000',
   '2024-02-29 23:59:59', '1000-01-01 00:00:00.01', '9999-12-31 23:59:59.9999', '2000-06-15 12:00:00.123456',
   '2038-01-19 03:14:07', '1970-01-01 00:00:01.001', '2024-05-05 05:05:05.050505'),
  (2, '0000-00-00', 0, '-12:00:00', '00:00:00.1', '-00:00:01.001', '-123:45:67.890123',
   '0000-00-00 00:00:00', '0000-00-00 00:00:00.00', '2020-01-01 00:00:00.0001', '1999-12-31 23:59:59.999999',
   NULL, '2001-09-09 01:46:40.5', '2024-01-01 00:00:00.000001'),
  (3, '1000-01-01', 1901, '-00:00:01', '-838:59:58.9', '00:00:00.000', '00:00:00.000001',
   '1000-01-01 00:00:00', NULL, NULL, NULL, NULL, NULL, NULL);
SET SESSION sql_mode = DEFAULT;
UPDATE times SET t6 = '-00:00:00.000001', dt6 = '2024-12-31 23:59:59.5' WHERE id = 3;

CREATE TABLE strs (
  id INT PRIMARY KEY,
  c CHAR(10), c255 CHAR(255), vc VARCHAR(255), vc2 VARCHAR(300), vlat VARCHAR(20) CHARACTER SET latin1,
  bn BINARY(4), vb VARBINARY(300),
  tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT,
  tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
  e ENUM('a','b','c'), e2 ENUM('v001','v002','v003','v004','v005','v006','v007','v008','v009','v010','v011','v012','v013','v014','v015','v016','v017','v018','v019','v020','v021','v022','v023','v024','v025','v026','v027','v028','v029','v030','v031','v032','v033','v034','v035','v036','v037','v038','v039','v040','v041','v042','v043','v044','v045','v046','v047','v048','v049','v050','v051','v052','v053','v054','v055','v056','v057','v058','v059','v060','v061','v062','v063','v064','v065','v066','v067','v068','v069','v070','v071','v072','v073','v074','v075','v076','v077','v078','v079','v080','v081','v082','v083','v084','v085','v086','v087','v088','v089','v090','v091','v092','v093','v094','v095','v096','v097','v098','v099','v100','v101','v102','v103','v104','v105','v106','v107','v108','v109','v110','v111','v112','v113','v114','v115','v116','v117','v118','v119','v120','v121','v122','v123','v124','v125','v126','v127','v128','v129','v130','v131','v132','v133','v134','v135','v136','v137','v138','v139','v140','v141','v142','v143','v144','v145','v146','v147','v148','v149','v150','v151','v152','v153','v154','v155','v156','v157','v158','v159','v160','v161','v162','v163','v164','v165','v166','v167','v168','v169','v170','v171','v172','v173','v174','v175','v176','v177','v178','v179','v180','v181','v182','v183','v184','v185','v186','v187','v188','v189','v190','v191','v192','v193','v194','v195','v196','v197','v198','v199','v200','v201','v202','v203','v204','v205','v206','v207','v208','v209','v210','v211','v212','v213','v214','v215','v216','v217','v218','v219','v220','v221','v222','v223','v224','v225','v226','v227','v228','v229','v230','v231','v232','v233','v234','v235','v236','v237','v238','v239','v240','v241','v242','v243','v244','v245','v246','v247','v248','v249','v250','v251','v252','v253','v254','v255','v256','v257','v258','v259','v260'),
  s SET('x','y','z'), s64 SET('b01','b02','b03','b04','b05','b06','b07','b08','b09','b10','b11','b12','b13','b14','b15','b16','b17','b18','b19','b20','b21','b22','b23','b24','b25','b26','b27','b28','b29','b30','b31','b32','b33','b34','b35','b36','b37','b38','b39','b40','b41','b42','b43','b44','b45','b46','b47','b48','b49','b50','b51','b52','b53','b54','b55','b56','b57','b58','b59','b60','b61','b62','b63','b64')
);
INSERT INTO strs VALUES
  (1, 'abc', REPEAT('é', 255), 'héllo wörld 😀 👩‍👩‍👧', REPEAT('x', 300), 'caf\xe9', X'00010203', X'00FF80', 'tiny', 'text \n with newline', REPEAT('m', 70000), '', X'01', X'DEADBEEF', REPEAT(X'AB', 70000), X'',
   'b', 'v260', 'x,z', 'b01,b33,b64'),
  (2, '', '', '', '', '', X'00000000', X'', '', '', '', '', X'', X'', X'', X'', 'a', 'v001', '', ''),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (4, 'quote''s', 'back\\slash', 'tab\tcr\r', '"dq"', 'ÄÖÜ', X'7F7F7F7F', X'0A0D09', 'x', 'y', 'z', REPEAT('long', 1000), X'00', X'00', X'00', X'00', 'c', 'v128', 'y', 'b64');
UPDATE strs SET vc = 'changed', e = 'c', s = 'x,y,z' WHERE id = 1;
DELETE FROM strs WHERE id = 2;

CREATE TABLE other (
  id INT PRIMARY KEY,
  j JSON, g GEOMETRY, p POINT, ls LINESTRING, pg POLYGON,
  i4 INET4, i6 INET6, u UUID
);
INSERT INTO other VALUES
  (1, '{"a": 1, "b": [true, null, "x"]}', ST_GeomFromText('POINT(1 2)'), ST_GeomFromText('POINT(-1.5 2.25)'),
   ST_GeomFromText('LINESTRING(0 0, 1 1, 2 3)'), ST_GeomFromText('POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))'),
   '192.168.0.1', '2001:db8::ff00:42:8329', '123e4567-e89b-12d3-a456-426614174000'),
  (2, '[]', NULL, NULL, NULL, NULL, '0.0.0.0', '::', '00000000-0000-0000-0000-000000000000'),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE other SET j = '{"changed": "yes"}', i4 = '255.255.255.255' WHERE id = 1;

-- Multi-statement transaction, rolled back savepoint, several tables.
BEGIN;
INSERT INTO ints (id, i) VALUES (10, 10);
SAVEPOINT sp;
INSERT INTO ints (id, i) VALUES (11, 11);
ROLLBACK TO SAVEPOINT sp;
UPDATE nums SET d = 1 WHERE id = 1;
COMMIT;

-- DDL between row events.
CREATE TABLE ddl (id INT PRIMARY KEY, a VARCHAR(10));
INSERT INTO ddl VALUES (1, 'one');
ALTER TABLE ddl ADD COLUMN b INT DEFAULT 7 FIRST;
INSERT INTO ddl (id, a) VALUES (2, 'two');
ALTER TABLE ddl DROP COLUMN a, ADD COLUMN c DATETIME(3) AFTER id;
INSERT INTO ddl VALUES (3, 3, '2024-01-01 00:00:00.123');
ALTER TABLE ddl MODIFY c VARCHAR(40);
UPDATE ddl SET c = 'text now' WHERE id = 3;
TRUNCATE ddl;
INSERT INTO ddl VALUES (4, 4, 'after truncate');

-- Many rows, split over several rows events.
CREATE TABLE bulk (id INT PRIMARY KEY, v VARCHAR(200));
INSERT INTO bulk SELECT seq, REPEAT(CHAR(65 + seq % 26), 150) FROM seq_1_to_2000;
UPDATE bulk SET v = 'u' WHERE id % 7 = 0;
DELETE FROM bulk WHERE id % 5 = 0;

-- Other row images.
SET SESSION binlog_row_image = 'MINIMAL';
UPDATE strs SET c = 'min' WHERE id = 1;
DELETE FROM ints WHERE id = 5;
SET SESSION binlog_row_image = 'NOBLOB';
UPDATE strs SET c = 'noblob' WHERE id = 4;
SET SESSION binlog_row_image = 'FULL';

-- Compressed events.
SET GLOBAL log_bin_compress = ON;
SET GLOBAL log_bin_compress_min_len = 10;
CREATE TABLE comp (id INT PRIMARY KEY, v TEXT);
INSERT INTO comp VALUES (1, REPEAT('compress me ', 100)), (2, 'short');
UPDATE comp SET v = REPEAT('again ', 200) WHERE id = 2;
DELETE FROM comp WHERE id = 1;
SET GLOBAL log_bin_compress = OFF;

-- A second GTID domain.
SET SESSION gtid_domain_id = 5;
INSERT INTO ints (id, i) VALUES (20, 20);
SET SESSION gtid_domain_id = 0;

FLUSH BINARY LOGS;
INSERT INTO ints (id, i) VALUES (21, 21);

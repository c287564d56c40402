export { ImportError, compileImportValidator, importOrders, importRecordSchema } from './import';
